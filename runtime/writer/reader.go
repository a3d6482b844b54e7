package writer

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"slices"
)

// Kind says what an Item holds.
type Kind uint8

const (
	KindHeader Kind = iota + 1 // Item.Header: a file starts
	KindProbe                  // Item.Probe: a probe definition
	KindRecord                 // Item.Record: one call
	KindLoss                   // Item.Loss: the writer lost records
	KindGap                    // Item.Gap: the reader skipped unreadable bytes
	KindLink                   // Item.Link: a trace began in a goroutine another trace started (format 1.2)
	KindRemote                 // Item.Remote: a trace joined a trace of another system (format 1.4)
)

func (k Kind) String() string {
	switch k {
	case KindHeader:
		return "header"
	case KindProbe:
		return "probe"
	case KindRecord:
		return "record"
	case KindLoss:
		return "loss"
	case KindGap:
		return "gap"
	case KindLink:
		return "link"
	case KindRemote:
		return "remote"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Gap reports bytes the reader could not use: a chunk with a bad length, checksum or
// content, bytes between chunks, or an unfinished chunk at the end of a file.
type Gap struct {
	File   string // file name, when the Reader opened the file itself
	Offset int64  // offset in the file of the first skipped byte
	Bytes  int64
	Torn   bool // the gap runs to the end of the file (typically a crash mid-write)
	// NotTrace: the gap is the whole source, in which nothing of a trace was
	// found (no file magic, no valid chunk): a file that is not a trace file,
	// rather than a trace torn at its end. Torn is false then.
	NotTrace bool
}

// Item is one element of a stream. Only the field named by Kind is set. Item holds no
// reference into the Reader's buffers; Header and Probe point to values the Reader
// keeps and never changes.
type Item struct {
	Kind   Kind
	Record Record
	Loss   Loss
	Gap    Gap
	Probe  *ProbeDef
	Header *Header
	Link   Link
	Remote Remote
}

// ReadStats counts what a Reader has seen so far.
type ReadStats struct {
	Files        int
	Chunks       int64 // valid chunks
	Records      int64
	Unfinished   int64 // of Records, calls that had not returned when the writer closed (FlagUnfinished)
	Probes       int64
	Losses       int64  // loss items
	Lost         uint64 // records the writer reported lost (sum of Loss.Count)
	Gaps         int64
	BadChunks    int64 // chunks rejected for their length, checksum or content
	SkippedBytes int64
	Unknown      int64 // items of kinds this reader does not know, skipped
	Links        int64 // link items
	Remotes      int64 // remote-parent items
}

type source struct {
	name string
	r    io.Reader
}

// Reader reads a record stream: one file, a rotated set, or any io.Reader. It
// recovers from damage: a torn or corrupt chunk is skipped up to the next valid
// chunk and reported as a KindGap item. A Reader is not safe for concurrent use.
type Reader struct {
	srcs    []source
	name    string
	src     io.Reader
	closers []io.Closer

	buf  []byte
	r, w int
	eof  bool
	off  int64 // file offset of buf[r]

	chunk  []byte // payload being decoded; aliases buf until consumed
	cpos   int
	cstart int64 // file offset of chunk[0]
	dec    decoder

	idx crcIndex // checksums while recovering from damage (recover.go)
	// work counts the bytes checksummed (failed candidates included), searched
	// for markers and moved within buf: the cost of reading, which tests bound.
	work int64

	gap         Gap   // being accumulated while Bytes > 0
	shortChunks int64 // chunks in gap that ran past the end of the source
	// traced: the current source showed something of a trace (its file
	// magic, or the start of it, or a valid chunk).
	traced bool
	hdr    *Header
	probes map[uint32]*ProbeDef
	// fileHdr and fileDefs are the header and definitions read since the current
	// file's magic: a header or definition equal to one of them is the writer's
	// repeat (docs/trace-format.md, "Anchors") and is not returned again.
	fileHdr  *Header
	fileDefs map[uint32]*ProbeDef
	stats    ReadStats
	err      error
}

// NewReader reads a stream from rd. Several files concatenated are one valid stream.
func NewReader(rd io.Reader) *Reader {
	return newReader([]source{{r: rd}})
}

func newReader(srcs []source) *Reader {
	r := &Reader{srcs: srcs, probes: make(map[uint32]*ProbeDef)}
	r.nextSource()
	return r
}

// Open reads the file at path followed by the files rotation made from it
// (RotatedPath(path, 1), ...) as long as they exist and belong to the same stream.
func Open(path string) (*Reader, error) {
	h, err := peekHeader(path)
	if err != nil {
		return nil, err
	}
	paths := []string{path}
	for seq := 1; ; seq++ {
		p := RotatedPath(path, seq)
		n, err := peekHeader(p)
		if err != nil || h == nil || n == nil || n.Stream != h.Stream || n.Seq != seq {
			break
		}
		paths = append(paths, p)
	}
	return openFiles(paths)
}

// OpenFiles reads the given files as one sequence. Files of one stream are read in
// the order of their header's Seq (so a shell glob's order does not matter); streams
// are read in the order their first file appears in paths. A file without a readable
// header stays where it is.
func OpenFiles(paths ...string) (*Reader, error) {
	type key struct {
		group, seq, pos int
	}
	keys := make([]key, len(paths))
	groups := map[uint64]int{}
	for i, p := range paths {
		h, err := peekHeader(p)
		if err != nil {
			return nil, err
		}
		keys[i] = key{group: i, pos: i}
		if h != nil {
			g, ok := groups[h.Stream]
			if !ok {
				g = i
				groups[h.Stream] = g
			}
			keys[i].group, keys[i].seq = g, h.Seq
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.seq, b.seq))
	})
	sorted := make([]string, len(paths))
	for i, k := range keys {
		sorted[i] = paths[k.pos]
	}
	return openFiles(sorted)
}

func openFiles(paths []string) (*Reader, error) {
	srcs := make([]source, 0, len(paths))
	var closers []io.Closer
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			for _, c := range closers {
				c.Close()
			}
			return nil, err
		}
		closers = append(closers, f)
		srcs = append(srcs, source{name: p, r: f})
	}
	r := newReader(srcs)
	r.closers = closers
	return r, nil
}

// peekHeader returns the header of the file at path, nil if it has none it can read.
func peekHeader(path string) (*Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := NewReader(io.LimitReader(f, 2*maxChunkLen))
	for i := 0; i < 4; i++ {
		it, err := r.Next()
		if err != nil {
			return nil, nil
		}
		if it.Kind == KindHeader {
			return it.Header, nil
		}
	}
	return nil, nil
}

// Close closes the files the Reader opened itself.
func (r *Reader) Close() error {
	var err error
	for _, c := range r.closers {
		if e := c.Close(); e != nil && err == nil {
			err = e
		}
	}
	r.closers = nil
	return err
}

// Header returns the header of the file being read, nil before the first one.
func (r *Reader) Header() *Header { return r.hdr }

// Probe returns the definition of probe id seen so far, nil if none.
func (r *Reader) Probe(id uint32) *ProbeDef { return r.probes[id] }

// Stats returns the counts so far.
func (r *Reader) Stats() ReadStats { return r.stats }

// All iterates over the remaining items. A read error other than the end of the
// stream is yielded last, with a zero Item.
func (r *Reader) All() iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		for {
			it, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Item{}, err)
				return
			}
			if !yield(it, nil) {
				return
			}
		}
	}
}

// Next returns the next item, or io.EOF after the last one. Damage is not an error:
// it is reported as a KindGap item and reading goes on. The errors are those of the
// underlying reader and an unsupported format version.
func (r *Reader) Next() (Item, error) {
	for r.err == nil {
		if r.cpos < len(r.chunk) {
			if it, ok := r.item(); ok {
				return it, nil
			}
			continue
		}
		r.chunk, r.cpos = nil, 0
		found, err := r.advance()
		if err != nil {
			r.err = err
			break
		}
		if found {
			r.stats.BadChunks += r.shortChunks
		}
		r.shortChunks = 0
		if r.gap.Bytes > 0 {
			g := r.gap
			g.Torn = !found && r.traced
			g.NotTrace = !found && !r.traced
			r.gap = Gap{}
			r.stats.Gaps++
			return Item{Kind: KindGap, Gap: g}, nil
		}
		if !found && !r.nextSource() {
			r.err = io.EOF
		}
	}
	return Item{}, r.err
}

// startFile forgets the anchor of the previous file: its header and
// definitions are returned again when the next file repeats them.
func (r *Reader) startFile() {
	r.fileHdr = nil
	if len(r.fileDefs) > 0 || r.fileDefs == nil {
		r.fileDefs = make(map[uint32]*ProbeDef)
	}
}

func (r *Reader) nextSource() bool {
	if len(r.srcs) == 0 {
		return false
	}
	s := r.srcs[0]
	r.srcs = r.srcs[1:]
	r.name, r.src = s.name, s.r
	r.r, r.w, r.off, r.eof = 0, 0, 0, false
	r.traced = false
	r.idx.reset()
	r.startFile()
	r.stats.Files++
	return true
}

// fill tries to buffer n bytes; fewer are buffered only at the end of the source.
//
// The buffered bytes move to the front only once the consumed ones are at least
// half the buffer, so each byte moves a bounded number of times: recovery asks
// for a mebibyte ahead at every byte it skips, and moving the buffer each time
// was quadratic. The buffer stays below four times the largest n.
func (r *Reader) fill(n int) error {
	zero := 0
	for r.w-r.r < n && !r.eof {
		if len(r.buf)-r.r < n && r.r > 0 && r.r >= len(r.buf)/2 {
			r.work += int64(r.w - r.r)
			copy(r.buf, r.buf[r.r:r.w])
			r.w -= r.r
			r.r = 0
		}
		if len(r.buf) < n || r.w == len(r.buf) {
			nb := make([]byte, num.Max(n, num.Max(2*len(r.buf), 4<<10)))
			r.work += int64(r.w - r.r)
			copy(nb, r.buf[r.r:r.w])
			r.w -= r.r
			r.r = 0
			r.buf = nb
		}
		k, err := r.src.Read(r.buf[r.w:])
		r.w += k
		switch {
		case err == io.EOF:
			r.eof = true
		case err != nil:
			return err
		case k == 0:
			if zero++; zero > 100 {
				return io.ErrNoProgress
			}
		}
	}
	return nil
}

func (r *Reader) consume(k int) {
	r.r += k
	r.off += int64(k)
}

func (r *Reader) skip(k int) {
	if r.gap.Bytes == 0 {
		r.gap = Gap{File: r.name, Offset: r.off}
	}
	r.gap.Bytes += int64(k)
	r.stats.SkippedBytes += int64(k)
	r.consume(k)
}

// advance moves to the next valid chunk of the current source, skipping (and
// accounting for) anything else. It returns false at the end of the source.
func (r *Reader) advance() (bool, error) {
	for {
		if err := r.fill(len(fileMagic)); err != nil {
			return false, err
		}
		b := r.buf[r.r:r.w]
		switch {
		case len(b) == 0:
			return false, nil
		case bytes.HasPrefix(b, fileMagic[:]):
			r.consume(len(fileMagic))
			r.startFile()
			r.traced = true
		case bytes.HasPrefix(b, syncMarker[:]):
			ok, err := r.chunkHere()
			if ok || err != nil {
				r.traced = r.traced || ok
				return ok, err
			}
		default:
			if r.off == 0 && r.eof && bytes.HasPrefix(fileMagic[:], b) {
				r.traced = true // a trace file cut inside its magic
			}
			if err := r.scan(); err != nil {
				return false, err
			}
		}
	}
}

// chunkHere checks the chunk whose sync marker is at buf[r]. If it is valid it
// becomes the current chunk; if not, one byte is skipped so scanning resumes.
func (r *Reader) chunkHere() (bool, error) {
	if err := r.fill(chunkHeaderLen); err != nil {
		return false, err
	}
	b := r.buf[r.r:r.w]
	if len(b) < chunkHeaderLen {
		r.skip(1)
		return false, nil
	}
	n := int(binary.LittleEndian.Uint32(b[4:8]))
	if n > maxChunkLen {
		r.stats.BadChunks++
		r.skip(1)
		return false, nil
	}
	if err := r.fill(chunkHeaderLen + n); err != nil {
		return false, err
	}
	b = r.buf[r.r:r.w]
	if len(b) < chunkHeaderLen+n {
		// The source ends inside the chunk: a torn tail, or a corrupt length. Go on
		// scanning in case valid chunks follow; if one does, this one was bad.
		r.shortChunks++
		r.skip(1)
		return false, nil
	}
	var crc uint32
	if r.idx.on {
		var summed int
		crc, summed = r.idx.chunkCRC(r.buf, r.r, r.off, n)
		r.work += int64(summed)
	} else {
		crc = crc32.Update(0, castagnoli(), b[4:8])
		crc = crc32.Update(crc, castagnoli(), b[chunkHeaderLen:chunkHeaderLen+n])
		r.work += int64(4 + n)
	}
	if crc != binary.LittleEndian.Uint32(b[8:12]) {
		// Recovering: candidates are checked through the index from now on,
		// until recoverQuiet clean bytes have been read (recover.go).
		r.idx.on = true
		r.idx.quiet = r.off + recoverQuiet
		r.stats.BadChunks++
		r.skip(1)
		return false, nil
	}
	if r.idx.on && r.off >= r.idx.quiet {
		r.idx.reset()
	}
	r.chunk, r.cpos, r.cstart = b[chunkHeaderLen:chunkHeaderLen+n], 0, r.off+chunkHeaderLen
	r.dec = decoder{}
	r.consume(chunkHeaderLen + n)
	r.stats.Chunks++
	return true, nil
}

// scan skips to the next possible sync marker or file magic after buf[r].
func (r *Reader) scan() error {
	const keep = len(fileMagic) - 1 // a marker may straddle the end of the buffer
	for {
		b := r.buf[r.r:r.w]
		i, searched := indexMarker(b[1:])
		r.work += int64(searched)
		if i >= 0 {
			r.skip(i + 1)
			return nil
		}
		if r.eof {
			r.skip(len(b))
			return nil
		}
		if len(b) > keep+1 {
			r.skip(len(b) - keep)
		}
		if err := r.fill(r.w - r.r + 1); err != nil {
			return err
		}
	}
}

// indexMarker returns the index of the first sync marker or file magic in b,
// or -1, and how many bytes it searched. It looks for the magic only before the
// first marker: searching all of b for a magic that is not there, at every false
// marker, was quadratic.
func indexMarker(b []byte) (i, searched int) {
	i = bytes.Index(b, syncMarker[:])
	before := b
	if i >= 0 {
		before = b[:i] // the two share no byte, so a magic ends before a marker starts
	}
	if j := bytes.Index(before, fileMagic[:]); j >= 0 {
		return j, 2 * len(before)
	}
	if i < 0 {
		return -1, 2 * len(b)
	}
	return i, 2*i + len(syncMarker)
}

// item decodes the item at chunk[cpos]. It returns false for an item to skip.
func (r *Reader) item() (Item, bool) {
	start := r.cpos
	c := cursor{b: r.chunk, i: start}
	kind := r.chunk[start]
	if kind&evBit != 0 {
		var it Item
		r.dec.event(&c, &it.Record)
		if c.bad {
			return r.badChunk(start), true
		}
		r.cpos = c.i
		r.stats.Records++
		if it.Record.Flags&FlagUnfinished != 0 {
			r.stats.Unfinished++
		}
		it.Kind = KindRecord
		return it, true
	}
	c.i++
	n := c.uvarint()
	if c.bad || n > uint64(len(c.b)-c.i) {
		return r.badChunk(start), true
	}
	body := cursor{b: c.b[c.i : c.i+int(n)]}
	r.cpos = c.i + int(n)
	switch kind {
	case wireHeader:
		h := new(Header)
		decodeHeader(&body, h)
		if body.bad {
			return r.badChunk(start), true
		}
		if h.Major != FormatMajor {
			r.err = fmt.Errorf("trace format %d.%d is not supported (this reader reads %d.x): %w",
				h.Major, h.Minor, FormatMajor, ErrVersion)
			return Item{}, false
		}
		if r.fileHdr != nil && *r.fileHdr == *h {
			return Item{}, false // the anchor's second copy
		}
		r.hdr, r.fileHdr = h, h
		return Item{Kind: KindHeader, Header: h}, true
	case wireProbe:
		p := new(ProbeDef)
		decodeProbe(&body, p)
		if body.bad {
			return r.badChunk(start), true
		}
		if d := r.fileDefs[p.ID]; d != nil && *d == *p {
			return Item{}, false // a repeat
		}
		r.probes[p.ID], r.fileDefs[p.ID] = p, p
		r.stats.Probes++
		return Item{Kind: KindProbe, Probe: p}, true
	case wireLoss:
		var l Loss
		decodeLoss(&body, &l)
		if body.bad {
			return r.badChunk(start), true
		}
		r.stats.Losses++
		r.stats.Lost += l.Count
		return Item{Kind: KindLoss, Loss: l}, true
	case wireLink:
		it := Item{Kind: KindLink}
		decodeLink(&body, &it.Link)
		if body.bad {
			return r.badChunk(start), true
		}
		r.stats.Links++
		return it, true
	case wireRemote:
		it := Item{Kind: KindRemote}
		decodeRemote(&body, &it.Remote)
		if body.bad {
			return r.badChunk(start), true
		}
		r.stats.Remotes++
		return it, true
	}
	r.stats.Unknown++
	return Item{}, false
}

// badChunk abandons a chunk from the item at chunk[at] on: its checksum was right
// but its content does not decode (a writer bug, or a newer writer that broke the
// rules).
func (r *Reader) badChunk(at int) Item {
	g := Gap{File: r.name, Offset: r.cstart + int64(at), Bytes: int64(len(r.chunk) - at)}
	r.chunk, r.cpos = nil, 0
	r.stats.BadChunks++
	r.stats.Gaps++
	r.stats.SkippedBytes += g.Bytes
	return Item{Kind: KindGap, Gap: g}
}

// ErrVersion is wrapped by the error Next returns for a file of an unsupported major
// format version.
var ErrVersion = errors.New("unsupported trace format version")
