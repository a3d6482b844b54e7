package writer

import "encoding/binary"

// Remote says that a trace joined a trace of another system (format 1.4,
// docs/trace-format.md, "Remote parent"): its root call ran inside a request
// that carried a W3C Trace Context or an OpenTelemetry span context. Tools
// give the trace's spans TraceID and put its root under SpanID, so that the
// method calls nest under the service's own span of the request.
type Remote struct {
	Trace   uint64   // the tigris trace that joined
	GID     uint64   // the goroutine it runs on
	TraceID [16]byte // the W3C trace id (never all zero)
	SpanID  [8]byte  // the parent span: the span the root call runs under (never zero)
	Flags   byte     // the W3C trace flags; bit 0 is "sampled"
	Time    int64    // when the root call started (monotonic clock, like Record.TIn)
}

// Sampled reports the W3C sampled flag: the caller recorded the request.
func (m *Remote) Sampled() bool { return m.Flags&1 != 0 }

// FlagRemote marks a Record that carries a Remote (Remote.Record) rather than
// a call. Like a link, it travels through a Sink as a record; the encoder
// writes it as a remote-parent item, and no reader ever returns a Record with
// FlagRemote set. Sinks that keep records should skip records with
// FlagRemote or turn them back with Record.Remote.
const FlagRemote Flags = 1 << 6

// Record packs the remote parent into a Record with FlagRemote for
// Sink.Write: Trace and GID keep their meaning; TIn and Size hold the trace
// id's two halves, EOI and ESS the span id's, Probe the flags, and TOut the
// time, so a lost remote parent is accounted for at its root's start like
// any record.
func (m *Remote) Record() Record {
	return Record{
		Probe: uint32(m.Flags), Flags: FlagRemote,
		EOI: binary.BigEndian.Uint32(m.SpanID[:4]), ESS: binary.BigEndian.Uint32(m.SpanID[4:]),
		Trace: m.Trace, GID: m.GID,
		TIn:  int64(binary.BigEndian.Uint64(m.TraceID[:8])),
		Size: int64(binary.BigEndian.Uint64(m.TraceID[8:])),
		TOut: m.Time,
	}
}

// Remote unpacks a Record made by Remote.Record; ok is false for any other
// record.
func (r *Record) Remote() (m Remote, ok bool) {
	if r.Flags&FlagRemote == 0 {
		return Remote{}, false
	}
	m = Remote{Trace: r.Trace, GID: r.GID, Flags: byte(r.Probe), Time: r.TOut}
	binary.BigEndian.PutUint64(m.TraceID[:8], uint64(r.TIn))
	binary.BigEndian.PutUint64(m.TraceID[8:], uint64(r.Size))
	binary.BigEndian.PutUint32(m.SpanID[:4], r.EOI)
	binary.BigEndian.PutUint32(m.SpanID[4:], r.ESS)
	return m, true
}

// remote appends a remote-parent item (kind 0x05).
func (e *encoder) remote(m *Remote) {
	b := e.tmp[:0]
	b = binary.AppendUvarint(b, m.Trace)
	b = binary.AppendUvarint(b, m.GID)
	b = append(b, m.TraceID[:]...)
	b = append(b, m.SpanID[:]...)
	b = append(b, m.Flags)
	b = binary.AppendVarint(b, m.Time)
	e.item(wireRemote, b)
	e.tmp = b
}

func decodeRemote(c *cursor, m *Remote) {
	m.Trace = c.uvarint()
	m.GID = c.uvarint()
	c.bytes(m.TraceID[:])
	c.bytes(m.SpanID[:])
	m.Flags = c.byte1()
	m.Time = c.varint()
}

// bytes fills b from the cursor.
func (c *cursor) bytes(b []byte) {
	if len(c.b)-c.i < len(b) {
		c.bad = true
		c.i = len(c.b)
		return
	}
	c.i += copy(b, c.b[c.i:])
}

// TraceBuilder.AddRemote and Trace.Remote: see trace.go.
