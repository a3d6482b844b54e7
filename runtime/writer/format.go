package writer

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"sync"
	"time"
)

// Format constants. docs/trace-format.md is the byte-level specification; this file
// and reader.go are its only implementation.
const (
	// FormatMajor changes when a reader of the previous major version could misread
	// a file; FormatMinor changes when something is added that older readers skip.
	FormatMajor = 1
	FormatMinor = 5 // 1.1: definitions anchored per chunk; 1.2: links; 1.3: the header names the record clock; 1.4: remote parents; 1.5: unfinished calls

	chunkHeaderLen = 12      // sync marker, payload length, CRC-32C
	maxChunkLen    = 1 << 20 // largest payload a reader accepts
	maxEventLen    = 1 + 5 + 1 + 5 + 5 + 10 + 10 + 10 + 10 + 10
	maxStringLen   = 4096 // longer header and probe strings are truncated

	defaultChunkBytes = 128 << 10
	minChunkBytes     = 256
	maxChunkBytes     = maxChunkLen - 64<<10 // leaves room for the item that crosses the limit
)

// fileMagic opens every file (PNG-style: a high byte, the name, CR LF, ^Z, LF, so that
// text-mode transfers and truncated copies are detected).
var fileMagic = [8]byte{0x89, 'T', 'G', 'R', '\r', '\n', 0x1a, '\n'}

// syncMarker opens every chunk; a reader that lost its place scans for it.
var syncMarker = [4]byte{0xD9, 'T', 'G', 'C'}

// castagnoli returns the CRC-32C table, made at its first use: making it
// (tables for the SSE4.2 path too) is a cost at start-up of every program
// that links the writer, most of which never write a file.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Item kinds on the wire. Kinds below 0x80 are framed (kind, uvarint length, body);
// a byte with the high bit set opens an event record.
const (
	wireHeader byte = 0x01
	wireProbe  byte = 0x02
	wireLoss   byte = 0x03
	wireLink   byte = 0x04 // since 1.2 (link.go)
	wireRemote byte = 0x05 // since 1.4 (remote.go)

	evBit      byte = 0x80 // event record
	evProbe    byte = 0x40 // probe id present (else: same as the previous record)
	evTrace    byte = 0x20 // trace delta present (else: same trace)
	evGID      byte = 0x10 // goroutine delta present (else: same goroutine)
	evXFlags   byte = 0x08 // a full flags byte follows
	evFlagMask byte = 0x07 // Flags bits 0..2 inline
)

// LossReason says why records were lost.
type LossReason uint8

const (
	LossQueueFull  LossReason = 1 // the async queue was full (OnFull Drop)
	LossWriteError LossReason = 2 // the chunk holding them could not be written
	// LossUnfinished (format 1.5) counts calls that had not returned when
	// the writer closed and could not be written as unfinished records
	// (FlagUnfinished): deeper than the monitor keeps open calls, or
	// changing while it read them. From and To are the close's time.
	LossUnfinished LossReason = 3
	lossReasons               = 4
)

func (r LossReason) String() string {
	switch r {
	case LossQueueFull:
		return "queue full"
	case LossWriteError:
		return "write error"
	case LossUnfinished:
		return "unfinished at close"
	}
	return "unknown"
}

// Loss says that Count records were lost. Every lost record's exit time TOut lies in
// [From, To] (monotonic clock, like Record.TOut).
type Loss struct {
	Count  uint64
	From   int64
	To     int64
	Reason LossReason
}

func (l *Loss) add(t int64) {
	if l.Count == 0 || t < l.From {
		l.From = t
	}
	if l.Count == 0 || t > l.To {
		l.To = t
	}
	l.Count++
}

func (l *Loss) merge(m Loss) {
	if m.Count == 0 {
		return
	}
	if l.Count == 0 || m.From < l.From {
		l.From = m.From
	}
	if l.Count == 0 || m.To > l.To {
		l.To = m.To
	}
	l.Count += m.Count
}

// ClockBase maps the monitor's monotonic clock to wall time: monotonic reading Mono
// was taken at wall time Wall (Unix nanoseconds).
type ClockBase struct {
	Wall int64 // Unix ns
	Mono int64 // runtime.nanotime at the same instant
}

// Time converts a monotonic reading (Record.TIn, Record.TOut, Loss.From...) to wall time.
func (c ClockBase) Time(mono int64) time.Time {
	return time.Unix(0, c.Wall+(mono-c.Mono))
}

// Header opens every file of a stream.
type Header struct {
	Major, Minor int       // format version of the file
	Stream       uint64    // random id shared by all files of one stream
	Seq          int       // file number within the stream: 0, 1, 2... (rotation)
	Clock        ClockBase // maps record times to wall time
	Start        int64     // wall time (Unix ns) the file was started
	PID          int
	Host         string
	Binary       string
	// Since 1.1: the clock the probes read (record times are nanoseconds of
	// runtime.nanotime's scale whichever it was) and, for a counter, its
	// calibrated rate in ticks per second when the file was started.
	ClockSource ClockSource
	TickHz      uint64
}

// ---- varints ----

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// putUvarint writes v at b[i:] (which must have room for 10 bytes) and returns the
// new index.
func putUvarint(b []byte, i int, v uint64) int {
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

func appendString(b []byte, s string) []byte {
	if len(s) > maxStringLen {
		s = s[:maxStringLen]
	}
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ---- encoder: one chunk under construction ----

// encoder builds one chunk: chunkHeaderLen reserved bytes, then items. Delta state is
// per chunk so every chunk decodes on its own.
type encoder struct {
	buf       []byte
	tmp       []byte // body of a framed item under construction
	prevProbe uint32
	prevTrace uint64
	prevGID   uint64
	prevTIn   int64
}

func newEncoder(size int) encoder {
	return encoder{buf: make([]byte, chunkHeaderLen, size+maxEventLen+chunkHeaderLen)}
}

func (e *encoder) empty() bool  { return len(e.buf) == chunkHeaderLen }
func (e *encoder) payload() int { return len(e.buf) - chunkHeaderLen }

func (e *encoder) reset() {
	e.buf = e.buf[:chunkHeaderLen]
	e.prevProbe, e.prevTrace, e.prevGID, e.prevTIn = 0, 0, 0, 0
}

// seal fills in the chunk header and returns the whole chunk. The encoder must be
// reset before reuse.
func (e *encoder) seal() []byte {
	b := e.buf
	copy(b[0:4], syncMarker[:])
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(b)-chunkHeaderLen))
	crc := crc32.Update(0, castagnoli(), b[4:8])
	crc = crc32.Update(crc, castagnoli(), b[chunkHeaderLen:])
	binary.LittleEndian.PutUint32(b[8:12], crc)
	return b
}

// record appends one event record, or the link item of a record with
// FlagLink, or the remote-parent item of one with FlagRemote.
func (e *encoder) record(r *Record) {
	if r.Flags&(FlagLink|FlagRemote) != 0 {
		if l, ok := r.Link(); ok {
			e.link(&l)
		} else if m, ok := r.Remote(); ok {
			e.remote(&m)
		}
		return
	}
	b := e.buf
	if cap(b)-len(b) < maxEventLen {
		nb := make([]byte, len(b), 2*cap(b)+maxEventLen)
		copy(nb, b)
		b = nb
	}
	i := len(b)
	b = b[:i+maxEventLen]
	head := evBit | byte(r.Flags)&evFlagMask
	if r.Flags&^Flags(evFlagMask) != 0 {
		head |= evXFlags
	}
	if r.Probe != e.prevProbe {
		head |= evProbe
	}
	if r.Trace != e.prevTrace {
		head |= evTrace
	}
	if r.GID != e.prevGID {
		head |= evGID
	}
	b[i] = head
	i++
	if head&evProbe != 0 {
		i = putUvarint(b, i, uint64(r.Probe))
	}
	if head&evXFlags != 0 {
		b[i] = byte(r.Flags)
		i++
	}
	i = putUvarint(b, i, uint64(r.EOI))
	i = putUvarint(b, i, uint64(r.ESS))
	if head&evTrace != 0 {
		i = putUvarint(b, i, zigzag(int64(r.Trace-e.prevTrace)))
	}
	if head&evGID != 0 {
		i = putUvarint(b, i, zigzag(int64(r.GID-e.prevGID)))
	}
	i = putUvarint(b, i, zigzag(r.TIn-e.prevTIn))
	i = putUvarint(b, i, zigzag(r.TOut-r.TIn))
	if r.Flags&FlagSize != 0 {
		i = putUvarint(b, i, zigzag(r.Size))
	}
	e.buf = b[:i]
	e.prevProbe, e.prevTrace, e.prevGID, e.prevTIn = r.Probe, r.Trace, r.GID, r.TIn
}

// item appends a framed item: kind, uvarint body length, body.
func (e *encoder) item(kind byte, body []byte) {
	e.buf = append(e.buf, kind)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(body)))
	e.buf = append(e.buf, body...)
}

func (e *encoder) header(h *Header) {
	b := e.tmp[:0]
	b = binary.AppendUvarint(b, uint64(h.Major))
	b = binary.AppendUvarint(b, uint64(h.Minor))
	b = binary.LittleEndian.AppendUint64(b, h.Stream)
	b = binary.AppendUvarint(b, uint64(h.Seq))
	b = binary.AppendVarint(b, h.Clock.Wall)
	b = binary.AppendVarint(b, h.Clock.Mono)
	b = binary.AppendVarint(b, h.Start)
	b = binary.AppendUvarint(b, uint64(h.PID))
	b = appendString(b, h.Host)
	b = appendString(b, h.Binary)
	b = binary.AppendUvarint(b, uint64(h.ClockSource))
	b = binary.AppendUvarint(b, h.TickHz)
	e.item(wireHeader, b)
	e.tmp = b
}

func (e *encoder) probe(d *ProbeDef) {
	b := e.tmp[:0]
	b = binary.AppendUvarint(b, uint64(d.ID))
	b = appendString(b, d.Signature)
	b = appendString(b, d.Package)
	b = appendString(b, d.Recv)
	b = appendString(b, d.Name)
	b = appendString(b, d.File)
	b = binary.AppendVarint(b, int64(d.Line))
	e.item(wireProbe, b)
	e.tmp = b
}

func (e *encoder) loss(l *Loss) {
	b := e.tmp[:0]
	b = binary.AppendUvarint(b, uint64(l.Reason))
	b = binary.AppendUvarint(b, l.Count)
	b = binary.AppendVarint(b, l.From)
	b = binary.AppendVarint(b, l.To)
	e.item(wireLoss, b)
	e.tmp = b
}

// ---- decoding ----

// cursor reads varints from a chunk payload with bounds checks; any failure sets bad.
type cursor struct {
	b   []byte
	i   int
	bad bool
}

func (c *cursor) uvarint() uint64 {
	v, n := binary.Uvarint(c.b[c.i:])
	if n <= 0 {
		c.bad = true
		c.i = len(c.b)
		return 0
	}
	c.i += n
	return v
}

func (c *cursor) varint() int64 { return unzigzag(c.uvarint()) }

func (c *cursor) byte1() byte {
	if c.i >= len(c.b) {
		c.bad = true
		return 0
	}
	c.i++
	return c.b[c.i-1]
}

func (c *cursor) fixed64() uint64 {
	if len(c.b)-c.i < 8 {
		c.bad = true
		c.i = len(c.b)
		return 0
	}
	c.i += 8
	return binary.LittleEndian.Uint64(c.b[c.i-8:])
}

func (c *cursor) uint32v() uint32 {
	v := c.uvarint()
	if v > math.MaxUint32 {
		c.bad = true
	}
	return uint32(v)
}

func (c *cursor) intv() int {
	v := c.varint()
	if int64(int(v)) != v {
		c.bad = true
	}
	return int(v)
}

func (c *cursor) uintv() int {
	v := c.uvarint()
	if v > math.MaxInt32 {
		c.bad = true
	}
	return int(v)
}

func (c *cursor) str() string {
	n := c.uvarint()
	if c.bad || n > uint64(len(c.b)-c.i) {
		c.bad = true
		c.i = len(c.b)
		return ""
	}
	s := string(c.b[c.i : c.i+int(n)])
	c.i += int(n)
	return s
}

// decoder holds the per-chunk delta state of event records.
type decoder struct {
	prevProbe uint32
	prevTrace uint64
	prevGID   uint64
	prevTIn   int64
}

// event decodes one event record whose head byte is c.b[c.i].
func (d *decoder) event(c *cursor, r *Record) {
	head := c.byte1()
	r.Flags = Flags(head & evFlagMask)
	r.Probe = d.prevProbe
	if head&evProbe != 0 {
		r.Probe = c.uint32v()
	}
	if head&evXFlags != 0 {
		r.Flags = Flags(c.byte1()) &^ (FlagLink | FlagRemote) // a call is neither
	}
	r.EOI = c.uint32v()
	r.ESS = c.uint32v()
	r.Trace = d.prevTrace
	if head&evTrace != 0 {
		r.Trace += uint64(c.varint())
	}
	r.GID = d.prevGID
	if head&evGID != 0 {
		r.GID += uint64(c.varint())
	}
	r.TIn = d.prevTIn + c.varint()
	r.TOut = r.TIn + c.varint()
	r.Size = 0
	if r.Flags&FlagSize != 0 {
		r.Size = c.varint()
	}
	d.prevProbe, d.prevTrace, d.prevGID, d.prevTIn = r.Probe, r.Trace, r.GID, r.TIn
}

func decodeHeader(c *cursor, h *Header) {
	h.Major = c.uintv()
	h.Minor = c.uintv()
	h.Stream = c.fixed64()
	h.Seq = c.uintv()
	h.Clock.Wall = c.varint()
	h.Clock.Mono = c.varint()
	h.Start = c.varint()
	h.PID = c.uintv()
	h.Host = c.str()
	h.Binary = c.str()
	if h.Major == 1 && h.Minor >= 3 {
		src := c.uvarint()
		if src > math.MaxUint8 {
			c.bad = true
		}
		h.ClockSource = ClockSource(src)
		h.TickHz = c.uvarint()
	}
}

func decodeProbe(c *cursor, d *ProbeDef) {
	d.ID = c.uint32v()
	d.Signature = c.str()
	d.Package = c.str()
	d.Recv = c.str()
	d.Name = c.str()
	d.File = c.str()
	d.Line = c.intv()
}

func decodeLoss(c *cursor, l *Loss) {
	r := c.uvarint()
	if r > math.MaxUint8 {
		c.bad = true
	}
	l.Reason = LossReason(r)
	l.Count = c.uvarint()
	l.From = c.varint()
	l.To = c.varint()
}
