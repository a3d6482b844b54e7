package writer

import (
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// RotatedPath is the name of file seq of a stream written to path: path itself for
// seq 0, then the number inserted before the extension ("app.tgr", "app.1.tgr",
// "app.2.tgr", ...).
func RotatedPath(path string, seq int) string {
	if seq == 0 {
		return path
	}
	ext := filepath.Ext(path)
	return path[:len(path)-len(ext)] + "." + strconv.Itoa(seq) + ext
}

// counters are the parts of Stats a fileOut updates; Stats reads them from any
// goroutine.
type counters struct {
	written atomic.Uint64
	dropped atomic.Uint64 // write errors and Write after Close
	bytes   atomic.Uint64
	errors  atomic.Uint64
	files   atomic.Int64
	cur     atomic.Pointer[string]
}

func (c *counters) fill(s *Stats) {
	s.Written = c.written.Load()
	s.Dropped += c.dropped.Load()
	s.Bytes = c.bytes.Load()
	s.Errors = c.errors.Load()
	s.Files = int(c.files.Load())
	if p := c.cur.Load(); p != nil {
		s.CurrentFile = *p
	}
}

var noFile = ""

// fileOut turns records into chunks and chunks into files: encoding, the probe
// definitions each file must repeat, rotation, and write-error accounting. It is not
// safe for concurrent use: the Async writer goroutine or the Sync lock owns it.
type fileOut struct {
	opt    *Options
	stream uint64
	seq    int

	f        io.WriteCloser // *os.File; tests substitute failing files
	size     int64          // bytes in f
	data     bool           // f holds a chunk beyond its header
	needHdr  bool           // f has no complete header yet
	failing  bool           // the last write failed: records are dropped until a retry succeeds
	reported bool           // OnError has been told about the current failure
	lastErr  error
	report   error // for OnError, taken by the owner with takeReport

	defs        []ProbeDef
	defSeen     map[uint32]ProbeDef
	defsInFile  int // defs[:defsInFile] are in the stream (replayed after rotation)
	defsEncoded int // defs[:defsEncoded] are in the stream or the current chunk
	// Every definition is written twice, in two chunks, so that one damaged chunk
	// loses no name (docs/trace-format.md, "Anchors"): defs[repeatFrom:repeatTo]
	// were written once and go again at the start of the next chunk; repeatIn
	// says the current chunk holds that repeat.
	repeatFrom, repeatTo int
	repeatIn             bool

	enc       encoder
	recs      uint64 // records in the current chunk
	chunkLoss []Loss // loss items in the current chunk
	pend      [lossReasons]Loss
	pendAny   bool

	hdr    encoder // builds header chunks
	hdrOut []byte

	cal *calibration // converts ticks to nanoseconds; nil: they are nanoseconds

	c counters
}

// newFileOut creates the first file and writes its header. An error creating the
// file is returned; an error writing the header is reported like any write error.
func newFileOut(opt *Options) (*fileOut, error) {
	o := &fileOut{
		opt:     opt,
		stream:  newStreamID(),
		defSeen: make(map[uint32]ProbeDef),
		enc:     newEncoder(opt.ChunkBytes),
		hdr:     newEncoder(opt.ChunkBytes),
	}
	if opt.TickTimes {
		o.cal = currentCal()
	}
	o.c.cur.Store(&noFile)
	if err := o.open(); err != nil {
		return nil, err
	}
	if err := o.ready(0); err != nil {
		o.fail(err)
	}
	return o, nil
}

func (o *fileOut) open() error {
	name := RotatedPath(o.opt.Path, o.seq)
	if dir := filepath.Dir(name); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating trace directory: %w", err)
		}
	}
	create := o.opt.create
	if create == nil {
		create = createFile
	}
	f, err := create(name)
	if err != nil {
		return fmt.Errorf("creating trace file: %w", err)
	}
	o.f, o.size, o.data, o.needHdr = f, 0, false, true
	o.c.files.Add(1)
	o.c.cur.Store(&name)
	return nil
}

func createFile(name string) (io.WriteCloser, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (o *fileOut) closeFile() {
	if o.f == nil {
		return
	}
	if err := o.f.Close(); err != nil {
		o.c.errors.Add(1)
		o.lastErr = err
		if o.report == nil {
			o.report = fmt.Errorf("closing trace file: %w", err)
		}
	}
	o.f = nil
	o.c.cur.Store(&noFile)
}

// ready makes the current file able to take a chunk of n bytes: it rotates when the
// chunk would cross RotateBytes, opens the file if there is none, and writes the
// header (file magic, header item, every probe definition already in the stream).
func (o *fileOut) ready(n int) error {
	if o.f != nil && o.opt.RotateBytes > 0 && o.data && o.size+int64(n) > o.opt.RotateBytes {
		o.closeFile()
		o.seq++
	}
	if o.f == nil {
		if err := o.open(); err != nil {
			return err
		}
	}
	if o.needHdr {
		if err := o.write(o.headerBytes()); err != nil {
			return err
		}
		o.needHdr = false
		if !o.repeatIn {
			// The anchor holds every definition in the stream twice: a pending
			// repeat of the previous file's last chunk is not needed here.
			o.repeatFrom, o.repeatTo = o.defsInFile, o.defsInFile
		}
	}
	return nil
}

// headerBytes is the start of a file: the magic and the anchor (the header and
// every definition in the stream so far), twice, each copy in chunks of its own,
// so that one damaged chunk loses neither the header nor a name.
func (o *fileOut) headerBytes() []byte {
	out := append(o.hdrOut[:0], fileMagic[:]...)
	e := &o.hdr
	h := o.opt.header(o.stream, o.seq)
	for copies := 0; copies < 2; copies++ {
		e.reset()
		e.header(&h)
		for i := 0; i < o.defsInFile; i++ {
			if e.payload() >= o.opt.ChunkBytes {
				out = append(out, e.seal()...)
				e.reset()
			}
			e.probe(&o.defs[i])
		}
		out = append(out, e.seal()...)
	}
	o.hdrOut = out
	return out
}

func (o *fileOut) write(b []byte) error {
	n, err := o.f.Write(b)
	o.size += int64(n)
	o.c.bytes.Add(uint64(n))
	if err != nil {
		return fmt.Errorf("writing trace file: %w", err)
	}
	return nil
}

func (o *fileOut) fail(err error) {
	o.c.errors.Add(1)
	o.lastErr = err
	o.failing = true
	if !o.reported {
		o.reported = true
		o.report = err
	}
}

func (o *fileOut) succeed() {
	o.failing, o.reported, o.lastErr = false, false, nil
}

// takeReport returns the error OnError should hear about, if any, once.
func (o *fileOut) takeReport() error {
	err := o.report
	o.report = nil
	return err
}

func (o *fileOut) define(d ProbeDef) {
	if old, ok := o.defSeen[d.ID]; ok && old == d {
		return
	}
	o.defSeen[d.ID] = d
	o.defs = append(o.defs, d)
}

// loss adds lost records whose span is in ticks.
func (o *fileOut) loss(l Loss) {
	if l.Count == 0 {
		return
	}
	l.From, l.To = o.cal.ns(l.From), o.cal.ns(l.To)
	o.pend[l.Reason%lossReasons].merge(l)
	o.pendAny = true
}

// needPrelude says the next record must wait for prelude: definitions to write
// or repeat, or loss records.
func (o *fileOut) needPrelude() bool {
	return o.defsEncoded < len(o.defs) || o.pendAny || o.repeatFrom < o.repeatTo && !o.repeatIn
}

// prelude puts what must precede the next record into the chunk: the repeat of
// the definitions the previous chunk introduced (always at the start of a
// chunk), new probe definitions and pending loss records. A chunk it fills is
// written, and the next one starts with that chunk's repeat.
func (o *fileOut) prelude() {
	for {
		if o.repeatFrom < o.repeatTo && !o.repeatIn {
			for i := o.repeatFrom; i < o.repeatTo; i++ {
				o.enc.probe(&o.defs[i])
			}
			o.repeatIn = true
		} else if o.defsEncoded < len(o.defs) {
			o.enc.probe(&o.defs[o.defsEncoded])
			o.defsEncoded++
		} else {
			break
		}
		if o.enc.payload() >= o.opt.ChunkBytes {
			if o.writeChunk() != nil {
				return
			}
		}
	}
	if o.pendAny {
		o.pendAny = false
		for i := range o.pend {
			if l := o.pend[i]; l.Count > 0 {
				l.Reason = LossReason(i)
				o.enc.loss(&l)
				o.chunkLoss = append(o.chunkLoss, l)
				o.pend[i] = Loss{}
			}
		}
	}
}

// records encodes rs, writing chunks as they fill. Their times are ticks
// (Ticks); records converts them to nanoseconds in place: the caller (the
// async writer) owns rs until it frees their slots.
func (o *fileOut) records(rs []Record) {
	for i := range rs {
		o.toNs(&rs[i])
	}
	for len(rs) > 0 {
		if o.failing || o.needPrelude() {
			o.recordNs(&rs[0])
			rs = rs[1:]
			continue
		}
		e, i := &o.enc, 0
		for ; i < len(rs) && e.payload() < o.opt.ChunkBytes; i++ {
			e.record(&rs[i])
		}
		o.recs += uint64(i)
		rs = rs[i:]
		if e.payload() >= o.opt.ChunkBytes {
			o.writeChunk()
		}
	}
}

// record encodes one record whose times are ticks; r is not changed.
func (o *fileOut) record(r *Record) {
	rec := *r
	o.toNs(&rec)
	o.recordNs(&rec)
}

// toNs converts a record's times from ticks to nanoseconds. A link (FlagLink)
// carries its time in TOut and a goroutine id in TIn (writer.Link.Record), a
// remote parent (FlagRemote) its time in TOut and half a trace id in TIn.
func (o *fileOut) toNs(r *Record) {
	if r.Flags&(FlagLink|FlagRemote) != 0 {
		r.TOut = o.cal.ns(r.TOut)
		return
	}
	r.TIn, r.TOut = o.cal.ns(r.TIn), o.cal.ns(r.TOut)
}

// recordNs encodes one record whose times are nanoseconds.
func (o *fileOut) recordNs(r *Record) {
	if !o.failing && o.needPrelude() {
		o.prelude()
	}
	if o.failing {
		// Dropped until flush, once per FlushInterval, retries the file.
		o.pend[LossWriteError].add(r.TOut)
		o.pendAny = true
		o.c.dropped.Add(1)
		return
	}
	o.enc.record(r)
	o.recs++
	if o.enc.payload() >= o.opt.ChunkBytes {
		o.writeChunk()
	}
}

// clock renews the calibration the records are converted with (refineClock);
// the owner calls it once per pass or flush.
func (o *fileOut) clock() {
	if o.opt.TickTimes {
		o.cal = refineClock()
	}
}

// writeChunk seals and writes the current chunk. On failure its records become a
// write-error loss, its loss items go back to pending and its probe definitions are
// encoded again later.
func (o *fileOut) writeChunk() error {
	if o.enc.empty() {
		return nil
	}
	chunk := o.enc.seal()
	err := o.ready(len(chunk))
	if err == nil {
		err = o.write(chunk)
	}
	if err == nil {
		o.data = true
		o.c.written.Add(o.recs)
		// The definitions this chunk introduced go again in the next one; a
		// repeat this chunk carried is done.
		if o.repeatIn || o.repeatFrom == o.repeatTo {
			o.repeatFrom = o.defsInFile
		}
		o.repeatTo, o.repeatIn = o.defsEncoded, false
		o.defsInFile = o.defsEncoded
		o.succeed()
	} else {
		o.fail(err)
		if o.recs > 0 {
			o.c.dropped.Add(o.recs)
			o.pend[LossWriteError].merge(recordSpan(chunk[chunkHeaderLen:]))
			o.pendAny = true
		}
		for _, l := range o.chunkLoss {
			o.pend[l.Reason%lossReasons].merge(l)
			o.pendAny = true
		}
		o.defsEncoded = o.defsInFile
		o.repeatIn = false // the repeat was lost with the chunk: it stays pending
	}
	o.recs, o.chunkLoss = 0, o.chunkLoss[:0]
	o.enc.reset()
	return err
}

// flush writes everything held. While failing it is the retry: it writes the pending
// probe definitions and loss records, and on success records flow again.
func (o *fileOut) flush() error {
	if o.failing {
		o.failing = false // reported stays set: a failed retry is not reported again
		if err := o.ready(0); err != nil {
			o.fail(err)
			return err
		}
	}
	o.prelude()
	if o.failing {
		return o.lastErr
	}
	if err := o.writeChunk(); err != nil {
		return err
	}
	o.succeed()
	return nil
}

// close flushes and closes the file.
func (o *fileOut) close() error {
	err := o.flush()
	o.closeFile()
	if err == nil && o.lastErr != nil {
		err = o.lastErr
	}
	return err
}

// abandon gives up after a panic inside the writer (a bug in tigris): the
// current chunk is discarded and the file is closed. The owner counts the
// records that were lost. It recovers from a panic of its own, since the state
// it works on may be broken.
func (o *fileOut) abandon() {
	defer func() { _ = recover() }()
	o.recs = 0
	o.enc.reset()
	o.closeFile()
}

// recordSpan decodes a chunk payload the writer built and returns the count and TOut
// bounds of its records: the loss when the chunk could not be written. Keeping the
// bounds while encoding would cost every record; a failed write is rare.
func recordSpan(payload []byte) Loss {
	var l Loss
	var d decoder
	var r Record
	c := cursor{b: payload}
	for c.i < len(c.b) && !c.bad {
		if c.b[c.i]&evBit != 0 {
			d.event(&c, &r)
			l.add(r.TOut)
			continue
		}
		c.i++
		n := c.uvarint()
		c.i += int(num.Min(n, uint64(len(c.b)-c.i)))
	}
	return l
}
