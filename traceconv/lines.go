package traceconv

import (
	"bufio"
	"encoding/hex"
	"io"
	"strconv"
	"time"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// WriteLines writes one line per item of r, in file order: text for people, or
// with asJSON one JSON object per line ("kind": header, probe, record, loss,
// gap, link or remote). Times are UTC wall times; in JSON, tin and tout are also Unix
// nanoseconds. It streams. With opt.Joined it writes only the records,
// remote parents and links of those traces.
//
// Text lines start with the item kind:
//
//	header  stream=0123456789abcdef seq=0 pid=42 host=h1 binary=/app start=2026-01-02T15:04:05.000000000Z format=1.3 clock=tsc@2096000000Hz
//	probe   7 example.com/shop.Find(int) error  m.go:12
//	record  2026-01-02T15:04:05.000000100Z trace=3 eoi=1 ess=1 g=17 60ns example.com/shop.Find(int) error [error]
//	record  2026-01-02T15:04:05.000000100Z trace=4 eoi=0 ess=0 g=1 >=2s main.main() [unfinished]
//	loss    120 records lost (queue full), exits between 2026-…Z and 2026-…Z
//	link    trace=5 g=18 started by trace=3 g=1 eoi=2 ess=1 in example.com/shop.Serve() at 2026-01-02T15:04:05.000000050Z
//	gap     app.tgr offset 4096: 512 bytes unreadable (torn tail)
func WriteLines(w io.Writer, r *writer.Reader, asJSON bool, opt Options) (Report, error) {
	var rep Report
	bw := bufio.NewWriterSize(w, 64<<10)
	var b []byte
	sc := scanner{opt: opt, rep: &rep}
	sc.onItem = func(s *stream, it *writer.Item) error {
		if opt.Joined != nil && !opt.Joined.keeps(s, it) {
			return nil
		}
		b = b[:0]
		if asJSON {
			b = appendItemJSON(b, s, it)
		} else {
			b = appendItemText(b, s, it)
		}
		if b == nil {
			return nil
		}
		b = append(b, '\n')
		_, err := bw.Write(b)
		return err
	}
	if err := sc.run(r); err != nil {
		return rep, err
	}
	return rep, bw.Flush()
}

// wallLayout has a fixed nine-digit fraction, so lines align and sort.
const wallLayout = "2006-01-02T15:04:05.000000000Z07:00"

// wallString formats Unix nanoseconds as a UTC time.
func wallString(ns int64) string { return time.Unix(0, ns).UTC().Format(wallLayout) }

func appendWall(b []byte, ns int64) []byte {
	return time.Unix(0, ns).UTC().AppendFormat(b, wallLayout)
}

func flagNames(f writer.Flags) string {
	var names string
	for _, n := range [...]struct {
		f    writer.Flags
		name string
	}{{writer.FlagError, "error"}, {writer.FlagPanic, "panic"}, {writer.FlagUnfinished, "unfinished"}} {
		if f&n.f != 0 {
			if names != "" {
				names += ","
			}
			names += n.name
		}
	}
	return names
}

func appendItemText(b []byte, s *stream, it *writer.Item) []byte {
	switch it.Kind {
	case writer.KindHeader:
		h := it.Header
		b = append(b, "header  stream="...)
		b = strconv.AppendUint(b, h.Stream, 16)
		b = append(b, " seq="...)
		b = strconv.AppendInt(b, int64(h.Seq), 10)
		b = append(b, " pid="...)
		b = strconv.AppendInt(b, int64(h.PID), 10)
		b = append(b, " host="...)
		b = append(b, h.Host...)
		b = append(b, " binary="...)
		b = append(b, h.Binary...)
		b = append(b, " start="...)
		b = appendWall(b, h.Start)
		b = append(b, " format="...)
		b = strconv.AppendInt(b, int64(h.Major), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(h.Minor), 10)
		// The clock the probes read (format 1.1): times in the file are
		// nanoseconds either way, converted from the counter's ticks at its rate.
		b = append(b, " clock="...)
		b = append(b, h.ClockSource.String()...)
		if h.TickHz != 0 {
			b = append(b, '@')
			b = strconv.AppendUint(b, h.TickHz, 10)
			b = append(b, "Hz"...)
		}
		return b
	case writer.KindProbe:
		p := it.Probe
		b = append(b, "probe   "...)
		b = strconv.AppendUint(b, uint64(p.ID), 10)
		b = append(b, ' ')
		b = append(b, s.probe(p.ID).sig...)
		if p.File != "" {
			b = append(b, "  "...)
			b = append(b, p.File...)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(p.Line), 10)
		}
		return b
	case writer.KindRecord:
		r := &it.Record
		b = append(b, "record  "...)
		b = appendWall(b, s.wall(r.TIn))
		b = append(b, " trace="...)
		b = strconv.AppendUint(b, s.traceID(r.Trace), 10)
		b = append(b, " eoi="...)
		b = strconv.AppendUint(b, uint64(r.EOI), 10)
		b = append(b, " ess="...)
		b = strconv.AppendUint(b, uint64(r.ESS), 10)
		b = append(b, " g="...)
		b = strconv.AppendUint(b, r.GID, 10)
		b = append(b, ' ')
		if r.Unfinished() {
			b = append(b, ">="...) // it had run this long when the writer closed
		}
		b = append(b, time.Duration(r.TOut-r.TIn).String()...)
		b = append(b, ' ')
		b = append(b, s.probe(r.Probe).sig...)
		if f := flagNames(r.Flags); f != "" {
			b = append(b, " ["...)
			b = append(b, f...)
			b = append(b, ']')
		}
		if r.Flags&writer.FlagSize != 0 {
			b = append(b, " size="...)
			b = strconv.AppendInt(b, r.Size, 10)
		}
		return b
	case writer.KindLoss:
		l := &it.Loss
		b = append(b, "loss    "...)
		b = strconv.AppendUint(b, l.Count, 10)
		b = append(b, " records lost ("...)
		b = append(b, l.Reason.String()...)
		b = append(b, "), exits between "...)
		b = appendWall(b, s.wall(l.From))
		b = append(b, " and "...)
		return appendWall(b, s.wall(l.To))
	case writer.KindLink:
		l := &it.Link
		b = append(b, "link    trace="...)
		b = strconv.AppendUint(b, s.traceID(l.Trace), 10)
		b = append(b, " g="...)
		b = strconv.AppendUint(b, l.GID, 10)
		b = append(b, " started by trace="...)
		b = strconv.AppendUint(b, s.traceID(l.Parent), 10)
		b = append(b, " g="...)
		b = strconv.AppendUint(b, l.ParentGID, 10)
		b = append(b, " eoi="...)
		b = strconv.AppendUint(b, uint64(l.EOI), 10)
		b = append(b, " ess="...)
		b = strconv.AppendUint(b, uint64(l.ESS), 10)
		if l.Probe != 0 {
			b = append(b, " in "...)
			b = append(b, s.probe(l.Probe).sig...)
		}
		b = append(b, " at "...)
		return appendWall(b, s.wall(l.Time))
	case writer.KindRemote:
		m := &it.Remote
		b = append(b, "remote  trace="...)
		b = strconv.AppendUint(b, s.traceID(m.Trace), 10)
		b = append(b, " g="...)
		b = strconv.AppendUint(b, m.GID, 10)
		b = append(b, " joined traceparent "...)
		b = append(b, remoteParent(m).String()...)
		b = append(b, " at "...)
		return appendWall(b, s.wall(m.Time))
	case writer.KindGap:
		g := &it.Gap
		b = append(b, "gap     "...)
		if g.File != "" {
			b = append(b, g.File...)
			b = append(b, ' ')
		}
		b = append(b, "offset "...)
		b = strconv.AppendInt(b, g.Offset, 10)
		b = append(b, ": "...)
		b = strconv.AppendInt(b, g.Bytes, 10)
		b = append(b, " bytes unreadable"...)
		if g.Torn {
			b = append(b, " (torn tail)"...)
		}
		return b
	}
	return nil
}

func appendItemJSON(b []byte, s *stream, it *writer.Item) []byte {
	b = append(b, '{')
	b = appendStringField(b, "kind", it.Kind.String())
	switch it.Kind {
	case writer.KindHeader:
		h := it.Header
		b = appendStringField(b, "stream", strconv.FormatUint(h.Stream, 16))
		b = appendIntField(b, "seq", int64(h.Seq))
		b = appendIntField(b, "pid", int64(h.PID))
		b = appendStringField(b, "host", h.Host)
		b = appendStringField(b, "binary", h.Binary)
		b = appendStringField(b, "start", wallString(h.Start))
		b = appendIntField(b, "clockWall", h.Clock.Wall)
		b = appendIntField(b, "clockMono", h.Clock.Mono)
		b = appendStringField(b, "format", strconv.Itoa(h.Major)+"."+strconv.Itoa(h.Minor))
		b = appendStringField(b, "clock", h.ClockSource.String())
		b = appendUintField(b, "tickHz", h.TickHz)
	case writer.KindProbe:
		p := it.Probe
		b = appendUintField(b, "id", uint64(p.ID))
		b = appendStringField(b, "signature", s.probe(p.ID).sig)
		b = appendStringField(b, "package", p.Package)
		b = appendStringField(b, "recv", p.Recv)
		b = appendStringField(b, "name", p.Name)
		b = appendStringField(b, "file", p.File)
		b = appendIntField(b, "line", int64(p.Line))
	case writer.KindRecord:
		r := &it.Record
		b = appendKey(b, "time")
		b = append(b, '"')
		b = appendWall(b, s.wall(r.TIn))
		b = append(b, '"')
		b = appendUintField(b, "trace", s.traceID(r.Trace))
		b = appendUintField(b, "eoi", uint64(r.EOI))
		b = appendUintField(b, "ess", uint64(r.ESS))
		b = appendUintField(b, "goroutine", r.GID)
		b = appendIntField(b, "tin", s.wall(r.TIn))
		b = appendIntField(b, "tout", s.wall(r.TOut))
		b = appendIntField(b, "durationNs", r.TOut-r.TIn)
		b = appendUintField(b, "probe", uint64(r.Probe))
		b = appendStringField(b, "signature", s.probe(r.Probe).sig)
		if r.Flags&writer.FlagError != 0 {
			b = appendBoolField(b, "error", true)
		}
		if r.Flags&writer.FlagPanic != 0 {
			b = appendBoolField(b, "panic", true)
		}
		if r.Unfinished() {
			b = appendBoolField(b, "unfinished", true)
		}
		if r.Flags&writer.FlagSize != 0 {
			b = appendIntField(b, "size", r.Size)
		}
	case writer.KindLoss:
		l := &it.Loss
		b = appendUintField(b, "count", l.Count)
		b = appendStringField(b, "reason", l.Reason.String())
		b = appendIntField(b, "from", s.wall(l.From))
		b = appendIntField(b, "to", s.wall(l.To))
	case writer.KindLink:
		l := &it.Link
		b = appendUintField(b, "trace", s.traceID(l.Trace))
		b = appendUintField(b, "goroutine", l.GID)
		b = appendUintField(b, "parentTrace", s.traceID(l.Parent))
		b = appendUintField(b, "parentGoroutine", l.ParentGID)
		b = appendUintField(b, "eoi", uint64(l.EOI))
		b = appendUintField(b, "ess", uint64(l.ESS))
		if l.Probe != 0 {
			b = appendUintField(b, "probe", uint64(l.Probe))
			b = appendStringField(b, "signature", s.probe(l.Probe).sig)
		}
		b = appendKey(b, "time")
		b = append(b, '"')
		b = appendWall(b, s.wall(l.Time))
		b = append(b, '"')
		b = appendIntField(b, "timeNs", s.wall(l.Time))
	case writer.KindRemote:
		m := &it.Remote
		p := remoteParent(m)
		b = appendUintField(b, "trace", s.traceID(m.Trace))
		b = appendUintField(b, "goroutine", m.GID)
		b = appendStringField(b, "traceId", hex.EncodeToString(p.TraceID[:]))
		b = appendStringField(b, "parentSpanId", hex.EncodeToString(p.SpanID[:]))
		b = appendBoolField(b, "sampled", p.Sampled())
		b = appendIntField(b, "timeNs", s.wall(m.Time))
	case writer.KindGap:
		g := &it.Gap
		b = appendStringField(b, "file", g.File)
		b = appendIntField(b, "offset", g.Offset)
		b = appendIntField(b, "bytes", g.Bytes)
		b = appendBoolField(b, "torn", g.Torn)
	}
	return append(b, '}')
}

// remoteParent is the request's trace position a remote parent item holds.
func remoteParent(m *writer.Remote) tracecontext.Parent {
	return tracecontext.Parent{TraceID: m.TraceID, SpanID: m.SpanID, Flags: m.Flags}
}
