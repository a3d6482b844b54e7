package traceconv

import (
	"bufio"
	"io"
	"path/filepath"
	"strconv"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// writeChrome writes the Chrome trace-event format (JSON object form), which
// Perfetto (ui.perfetto.dev) and chrome://tracing open: each record is one
// complete event ("ph":"X") named by the function's signature, on process = the
// monitored process id and thread = its goroutine; a loss item is an instant
// event ("ph":"i") at the time of the loss; a link is a flow ("ph":"s" on the
// goroutine that ran the go statement, at its time, bound to the enclosing
// call; "ph":"f" on the new goroutine, bound to its next call, the first of the
// linked trace), which Perfetto and chrome://tracing draw as an arrow from the
// parent call to the child's. Times are microseconds from the clock
// base of the first file (otherData.startTime), to the nanosecond. It streams:
// memory stays constant but for one set of goroutine names per process.
func writeChrome(w io.Writer, r *writer.Reader, opt Options) (Report, error) {
	var rep Report
	c := chromeWriter{bw: bufio.NewWriterSize(w, 256<<10), base: -1}
	c.buf = append(c.buf, `{"traceEvents":[`...)
	sc := scanner{
		opt:      opt,
		rep:      &rep,
		onHeader: c.header,
		onRecord: c.record,
		onLoss:   c.loss,
		onLink:   c.link,
	}
	if err := sc.run(r); err != nil {
		return rep, err
	}
	b := append(c.buf, `],"displayTimeUnit":"ns","otherData":{"source":"tigris"`...)
	if c.base >= 0 {
		b = appendStringField(b, "startTime", wallString(c.base))
	}
	b = appendIntField(b, "records", rep.Records)
	b = appendUintField(b, "lost", rep.Lost)
	b = appendIntField(b, "gaps", rep.Gaps)
	b = append(b, "}}\n"...)
	c.buf = b
	return rep, c.flush(true)
}

type chromeWriter struct {
	bw    *bufio.Writer
	buf   []byte
	n     int   // events written
	base  int64 // wall time (Unix ns) that ts 0 stands for; -1 until known
	names []string
	// threads holds the goroutines named so far, per stream.
	threads map[*stream]map[uint64]bool
}

func (c *chromeWriter) event() {
	if c.n > 0 {
		c.buf = append(c.buf, ',', '\n')
	} else {
		c.buf = append(c.buf, '\n')
	}
	c.n++
}

func (c *chromeWriter) flush(final bool) error {
	if len(c.buf) > 0 {
		if _, err := c.bw.Write(c.buf); err != nil {
			return err
		}
		c.buf = c.buf[:0]
	}
	if final {
		return c.bw.Flush()
	}
	return nil
}

func (c *chromeWriter) ts(s *stream, mono int64) int64 {
	t := s.wall(mono)
	if c.base < 0 {
		c.base = t
	}
	return t - c.base
}

func (c *chromeWriter) header(s *stream) error {
	if c.base < 0 && s.hdr != nil {
		c.base = s.hdr.Clock.Wall
	}
	if c.threads == nil {
		c.threads = make(map[*stream]map[uint64]bool)
	}
	if c.threads[s] != nil || s.hdr == nil {
		return nil // the stream's process is named already
	}
	c.threads[s] = make(map[uint64]bool)
	c.event()
	b := append(c.buf, `{"name":"process_name","ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(s.pid()), 10)
	b = append(b, `,"args":{"name":`...)
	name := nameOr(filepath.Base(s.hdr.Binary), "process")
	if s.hdr.Host != "" {
		name += " on " + s.hdr.Host
	}
	b = appendString(b, name)
	c.buf = append(b, "}}"...)
	return nil
}

// thread names goroutine gid of stream s's process, once.
func (c *chromeWriter) thread(s *stream, gid uint64) {
	if c.threads[s] == nil {
		if c.threads == nil {
			c.threads = make(map[*stream]map[uint64]bool)
		}
		c.threads[s] = make(map[uint64]bool)
	}
	if g := c.threads[s]; !g[gid] {
		g[gid] = true
		c.event()
		b := append(c.buf, `{"name":"thread_name","ph":"M","pid":`...)
		b = strconv.AppendInt(b, int64(s.pid()), 10)
		b = append(b, `,"tid":`...)
		b = strconv.AppendUint(b, gid, 10)
		b = append(b, `,"args":{"name":"goroutine `...)
		b = strconv.AppendUint(b, gid, 10)
		c.buf = append(b, `"}}`...)
	}
}

func (c *chromeWriter) record(s *stream, p *probe, r *writer.Record) error {
	c.thread(s, r.GID)
	if p.idx < 0 {
		p.idx = len(c.names)
		c.names = append(c.names, string(appendString(nil, p.sig)))
	}
	c.event()
	b := append(c.buf, `{"name":`...)
	b = append(b, c.names[p.idx]...)
	b = append(b, `,"ph":"X","ts":`...)
	b = appendMicros(b, c.ts(s, r.TIn))
	b = append(b, `,"dur":`...)
	b = appendMicros(b, r.TOut-r.TIn)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(s.pid()), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendUint(b, r.GID, 10)
	b = append(b, `,"args":{"trace":`...)
	b = strconv.AppendUint(b, s.traceID(r.Trace), 10)
	b = append(b, `,"eoi":`...)
	b = strconv.AppendUint(b, uint64(r.EOI), 10)
	b = append(b, `,"ess":`...)
	b = strconv.AppendUint(b, uint64(r.ESS), 10)
	if r.Flags&writer.FlagError != 0 {
		b = append(b, `,"error":true`...)
	}
	if r.Flags&writer.FlagPanic != 0 {
		b = append(b, `,"panic":true`...)
	}
	if r.Unfinished() {
		b = append(b, `,"unfinished":true`...) // running until the writer closed
	}
	if r.Flags&writer.FlagSize != 0 {
		b = appendIntField(b, "size", r.Size)
	}
	c.buf = append(b, "}}"...)
	if len(c.buf) >= 64<<10 {
		return c.flush(false)
	}
	return nil
}

// link writes the flow from the go statement to the linked trace's first
// call. Its id is the child trace's, unique in the input.
func (c *chromeWriter) link(s *stream, l *writer.Link) error {
	c.thread(s, l.ParentGID)
	c.thread(s, l.GID)
	for _, start := range []bool{true, false} {
		c.event()
		b := append(c.buf, `{"name":"go","cat":"goroutine","ph":`...)
		if start {
			b = append(b, `"s"`...)
		} else {
			b = append(b, `"f"`...)
		}
		b = append(b, `,"id":`...)
		b = strconv.AppendUint(b, s.traceID(l.Trace), 10)
		b = append(b, `,"ts":`...)
		b = appendMicros(b, c.ts(s, l.Time))
		b = append(b, `,"pid":`...)
		b = strconv.AppendInt(b, int64(s.pid()), 10)
		b = append(b, `,"tid":`...)
		if !start {
			b = strconv.AppendUint(b, l.GID, 10)
			c.buf = append(b, '}')
			continue
		}
		b = strconv.AppendUint(b, l.ParentGID, 10)
		b = append(b, `,"args":{"parentTrace":`...)
		b = strconv.AppendUint(b, s.traceID(l.Parent), 10)
		b = append(b, `,"trace":`...)
		b = strconv.AppendUint(b, s.traceID(l.Trace), 10)
		b = append(b, `,"eoi":`...)
		b = strconv.AppendUint(b, uint64(l.EOI), 10)
		b = append(b, `,"ess":`...)
		b = strconv.AppendUint(b, uint64(l.ESS), 10)
		c.buf = append(b, "}}"...)
	}
	return nil
}

func (c *chromeWriter) loss(s *stream, l *writer.Loss) error {
	c.event()
	b := append(c.buf, `{"name":`...)
	b = appendString(b, "tigris: "+strconv.FormatUint(l.Count, 10)+" records lost ("+l.Reason.String()+")")
	b = append(b, `,"ph":"i","s":"p","ts":`...)
	b = appendMicros(b, c.ts(s, l.From))
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(s.pid()), 10)
	b = append(b, `,"tid":0,"args":{"count":`...)
	b = strconv.AppendUint(b, l.Count, 10)
	b = append(b, `,"until_us":`...)
	b = appendMicros(b, c.ts(s, l.To))
	c.buf = append(b, "}}"...)
	return nil
}
