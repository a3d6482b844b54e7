package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Following trace files. A stream (one writer, one process) is a sequence of
// files, seq 0, 1, 2, ... (rotation). Each file is read with writer.Reader
// from its start, through a tail that waits at the end of the file instead of
// ending it while more may come: so the Reader never sees a half-written
// chunk as a torn one, and whatever the format grows (new item kinds) reaches
// the shipper through the Reader, which skips what it does not know. A file
// ends when its successor exists (the writer closes a file before it starts
// the next), when the process that writes it is gone, or, with Once, at its
// end. The position in a stream is (file seq, items read from that file):
// a file only grows, so the same count of items is the same place after a
// restart, whatever the chunks hold.
//
// Files may go while they are followed: whoever keeps the trace directory
// may remove shipped files (the checkpoint's file among them), or a file may
// be replaced by another stream's (a program restarted with a fixed path).
// A follower whose file is gone, or holds another stream, goes on with the
// lowest later file of its stream it can find, and counts the files it
// skipped as a gap; with none, its stream has ended once its process is gone
// (or with Once). A file that cannot be read for another reason is retried;
// with Once the follower gives it up and says so (readBatch.failed), so the
// run ends and a later run retries from the same position.

// readBatch is what a follower hands to the shipper: items of one file of one
// stream, in file order, with the position after them.
type readBatch struct {
	hdr *writer.Header // the header of the items' stream (every batch carries it)
	// owner is the header of the follower's stream, the one whose position
	// path, seq and items are: the stream of the file's first header. Files
	// concatenated into one (a valid stream for the reader) hold other
	// streams' items further on.
	owner *writer.Header
	// fed, on the last batch (ended or failed), are the streams whose items
	// the follower read, its own included: none gets more.
	fed    []uint64
	path   string
	seq    int
	items  int64 // items read from the file, this batch included
	probes []writer.ProbeDef
	recs   []writer.Record
	links  []batchLink
	// remotes are the remote parents read. They are taken before the
	// batch's records: a trace's records may come before or after its
	// remote parent in the file (the writer's per-P queues), and the
	// trace becomes spans only after its settling window (remote.go).
	remotes []writer.Remote
	lost    uint64 // records the program's writer reported lost
	gaps    int64  // damaged stretches skipped, and files found gone
	ended   bool   // the stream has no more files and will get no more items
	// failed: with Once, the follower gave up on a file it could not read;
	// the stream is not ended (a later run reads on from the position).
	failed bool
	// caughtUp: the batch ends where the file ends for now.
	caughtUp bool
}

// batchLink is a link item and its place in the batch: before recs[at].
type batchLink struct {
	at   int
	link writer.Link
}

// readBatchRecords is how many records a follower puts into one batch.
const readBatchRecords = 4096

// position is where a follower starts.
type position struct {
	path  string
	seq   int
	items int64
}

// follower reads one stream.
type follower struct {
	stream uint64
	hdr0   *writer.Header // the header discovery read, until the file's own
	start  position
	once   bool
	poll   time.Duration
	host   string // this machine's name, to tell whether a writer's process is gone
	out    chan<- *readBatch
	report func(error)
	// later returns the file of the stream with the lowest seq above seq
	// that exists, if any (discovery.later).
	later func(stream uint64, seq int) (streamFile, bool)
	// retry is how long a file that cannot be read waits for another try.
	retry time.Duration
	fed   []uint64 // the streams read so far (readBatch.fed)
}

func (f *follower) run(ctx context.Context) {
	pos := f.start
	hdr := f.hdr0
	for {
		h, err := f.file(ctx, pos)
		if h != nil {
			hdr = h
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errOtherStream) {
			// The file is gone: on with the next file of the stream there is.
			if next, ok := f.later(f.stream, pos.seq); ok {
				f.report(fmt.Errorf("%s: %w; going on with %s", pos.path, err, next.path))
				pos = position{path: next.path, seq: next.hdr.Seq}
				if !f.emit(ctx, &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, gaps: 1}) {
					return
				}
				continue
			}
			if !f.once && !f.processGone(hdr) {
				// Its process still runs and may write the next file.
				if !f.sleep(ctx, f.poll) {
					return
				}
				continue
			}
			f.report(fmt.Errorf("%s: %w; the stream has no later file", pos.path, err))
			f.emit(ctx, &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, items: -1, gaps: 1, ended: true})
			return
		}
		if err != nil {
			if f.once {
				f.report(fmt.Errorf("following %s: %w; not read to its end, a later run reads on from here", pos.path, err))
				f.emit(ctx, &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, items: -1, failed: true})
				return
			}
			f.report(fmt.Errorf("following %s: %w; trying again in %s", pos.path, err, f.retry))
			if !f.sleep(ctx, f.retry) {
				return
			}
			continue
		}
		next := successor(pos.path, pos.seq)
		if h, _ := peekHeader(next); h != nil && hdr != nil && h.Stream == hdr.Stream && h.Seq == pos.seq+1 {
			pos = position{path: next, seq: pos.seq + 1}
			continue
		}
		if later, ok := f.later(f.stream, pos.seq); ok {
			// Files between this one and a later one are gone.
			f.report(fmt.Errorf("the files of %s's stream between sequence numbers %d and %d are gone; going on with %s", pos.path, pos.seq, later.hdr.Seq, later.path))
			pos = position{path: later.path, seq: later.hdr.Seq}
			if !f.emit(ctx, &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, gaps: 1}) {
				return
			}
			continue
		}
		f.emit(ctx, &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, items: -1, ended: true})
		return
	}
}

// emit hands b to the shipper; false when ctx ended first.
func (f *follower) emit(ctx context.Context, b *readBatch) bool {
	b.owner = f.hdr0
	if b.ended || b.failed {
		b.fed = f.streams()
	}
	select {
	case f.out <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *follower) sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// streams returns the streams the follower read, its own first.
func (f *follower) streams() []uint64 {
	out := []uint64{f.stream}
	for _, id := range f.fed {
		if id != f.stream {
			out = append(out, id)
		}
	}
	return out
}

// processGone reports whether the process that writes the stream is known
// to be gone.
func (f *follower) processGone(hdr *writer.Header) bool {
	return hdr != nil && hdr.Host == f.host && !processAlive(hdr.PID)
}

// errOtherStream: the file at a stream's position holds another stream now.
var errOtherStream = errors.New("the file holds another stream now")

// file reads one file from pos to its end and returns its header.
func (f *follower) file(ctx context.Context, pos position) (*writer.Header, error) {
	fh, err := os.Open(pos.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	t := &tail{f: fh, ctx: ctx, poll: f.poll, info: fi, path: pos.path}
	r := writer.NewReader(t)
	hdr := f.hdr0
	headed := false
	var b *readBatch
	var n int64
	send := func() error {
		if b == nil {
			return nil
		}
		b.items = n
		if !f.emit(ctx, b) {
			return ctx.Err()
		}
		b = nil
		return nil
	}
	batch := func() *readBatch {
		if b == nil {
			b = &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, recs: make([]writer.Record, 0, readBatchRecords)}
		}
		return b
	}
	t.final = func() bool {
		// About to wait: hand over what was read, so a quiet program's
		// records are not held back, and say that the reading is caught up.
		batch().caughtUp = true
		if send() != nil {
			return true
		}
		return f.once || f.ended(hdr, pos, t)
	}
	for {
		it, err := r.Next()
		if err == io.EOF {
			return hdr, send()
		}
		if err != nil {
			return hdr, err
		}
		n++
		skip := n <= pos.items
		switch it.Kind {
		case writer.KindHeader:
			if !headed && it.Header.Stream != f.stream {
				// The file's own header: another stream took the path. (A
				// header further on is that of files concatenated into one.)
				return hdr, fmt.Errorf("%s: %w", pos.path, errOtherStream)
			}
			headed = true
			if !slices.Contains(f.fed, it.Header.Stream) {
				f.fed = append(f.fed, it.Header.Stream)
			}
			if b != nil && b.hdr != nil && b.hdr.Stream != it.Header.Stream {
				// Another stream's items follow: the batch read so far is
				// the previous stream's.
				if err := send(); err != nil {
					return hdr, err
				}
			}
			hdr = it.Header
			if b != nil {
				b.hdr = hdr
			}
		case writer.KindProbe:
			// Definitions are kept even where records are skipped: the
			// records after the position need them.
			batch().probes = append(batch().probes, *it.Probe)
		case writer.KindRecord:
			if !skip {
				batch().recs = append(batch().recs, it.Record)
			}
		case writer.KindLink:
			if !skip {
				lb := batch()
				lb.links = append(lb.links, batchLink{len(lb.recs), it.Link})
			}
		case writer.KindRemote:
			// Kept even where records are skipped, as definitions are:
			// the records after the position need them.
			batch().remotes = append(batch().remotes, it.Remote)
		case writer.KindLoss:
			if !skip {
				batch().lost += it.Loss.Count
			}
		case writer.KindGap:
			if !skip {
				batch().gaps++
			}
		}
		if b != nil && len(b.recs) >= readBatchRecords {
			if err := send(); err != nil {
				return hdr, err
			}
		}
	}
}

// ended reports whether no more will be written to the file: a later file
// of its stream exists, it was truncated or replaced, or its writer's process
// is gone.
func (f *follower) ended(hdr *writer.Header, pos position, t *tail) bool {
	if h, _ := peekHeader(successor(pos.path, pos.seq)); h != nil && hdr != nil && h.Stream == hdr.Stream {
		return true
	}
	if _, ok := f.later(f.stream, pos.seq); ok {
		return true
	}
	if fi, err := os.Stat(pos.path); err != nil || !os.SameFile(fi, t.info) || fi.Size() < t.off {
		return true
	}
	return f.processGone(hdr)
}

// tail reads a file that may still grow: at its end it asks final whether
// more can come, and waits for it if so.
type tail struct {
	f     *os.File
	ctx   context.Context
	poll  time.Duration
	info  os.FileInfo
	path  string
	off   int64
	final func() bool
	done  bool
}

func (t *tail) Read(p []byte) (int, error) {
	for {
		n, err := t.f.Read(p)
		t.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if t.done {
			return 0, io.EOF
		}
		if t.final() {
			// Nothing more will be written: read what came meanwhile, then end.
			t.done = true
			continue
		}
		select {
		case <-t.ctx.Done():
			return 0, t.ctx.Err()
		case <-time.After(t.poll):
		}
	}
}

// successor is the path of file seq+1 of the stream whose file seq is at path
// (writer.RotatedPath's names: app.tgr, app.1.tgr, app.2.tgr, ...).
func successor(path string, seq int) string {
	base := path
	if seq > 0 {
		ext := filepath.Ext(path)
		stem := strings.TrimSuffix(path, ext)
		if i := strings.LastIndexByte(stem, '.'); i >= 0 && stem[i+1:] == strconv.Itoa(seq) {
			base = stem[:i] + ext
		}
	}
	return writer.RotatedPath(base, seq+1)
}

// peekHeader returns the header of the trace file at path; nil when it has
// none yet (a file just created) or cannot be read.
func peekHeader(path string) (*writer.Header, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := writer.NewReader(io.LimitReader(fh, 4<<20))
	for i := 0; i < 4; i++ {
		it, err := r.Next()
		if err != nil {
			return nil, nil
		}
		if it.Kind == writer.KindHeader {
			return it.Header, nil
		}
	}
	return nil, nil
}

// discovery finds trace files and the streams they belong to.
type discovery struct {
	patterns []string
	mu       sync.Mutex
	seen     map[string]fileKey // path → what it held when last looked at
}

type fileKey struct {
	stream uint64
	seq    int
	size   int64
}

// streamFile is a file of a stream found by a scan.
type streamFile struct {
	path string
	hdr  *writer.Header
}

// scan returns the first file found of each stream (the lowest seq present),
// streams in order of their files' names. A pattern is a file, a directory
// (its *.tgr files) or a glob.
func (d *discovery) scan() ([]streamFile, error) {
	var paths []string
	for _, p := range d.patterns {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			m, err := filepath.Glob(filepath.Join(p, "*.tgr"))
			if err != nil {
				return nil, err
			}
			paths = append(paths, m...)
		case err == nil:
			paths = append(paths, p)
		default:
			m, gerr := filepath.Glob(p)
			if gerr != nil {
				return nil, fmt.Errorf("trace pattern %q: %w", p, gerr)
			}
			paths = append(paths, m...)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	d.mu.Lock()
	defer d.mu.Unlock()
	// Only the files found now are kept: a file removed since the last scan
	// must not be offered by later.
	seen := make(map[string]fileKey, len(paths))
	first := map[uint64]streamFile{}
	var order []uint64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		k, ok := d.seen[p]
		if !ok || fi.Size() < k.size || k.stream == 0 {
			h, _ := peekHeader(p)
			if h == nil {
				continue // no header yet
			}
			k = fileKey{stream: h.Stream, seq: h.Seq}
		}
		k.size = fi.Size()
		seen[p] = k
		f, ok := first[k.stream]
		if !ok {
			order = append(order, k.stream)
		}
		if !ok || k.seq < f.hdr.Seq {
			h, _ := peekHeader(p)
			if h == nil {
				continue
			}
			first[k.stream] = streamFile{path: p, hdr: h}
		}
	}
	d.seen = seen
	out := make([]streamFile, 0, len(order))
	for _, s := range order {
		if f, ok := first[s]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// later returns the file of stream with the lowest seq above seq among the
// files the last scan found.
func (d *discovery) later(stream uint64, seq int) (streamFile, bool) {
	d.mu.Lock()
	best, bestSeq := "", -1
	for p, k := range d.seen {
		if k.stream == stream && k.seq > seq && (bestSeq < 0 || k.seq < bestSeq) {
			best, bestSeq = p, k.seq
		}
	}
	d.mu.Unlock()
	if best == "" {
		return streamFile{}, false
	}
	h, _ := peekHeader(best)
	if h == nil || h.Stream != stream {
		return streamFile{}, false // gone or replaced since the scan
	}
	return streamFile{path: best, hdr: h}, true
}

// errNoTraces is returned by a run with Once when no trace file was found.
var errNoTraces = errors.New("no trace files found")
