package traceconv

import (
	"bufio"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// writeOpenXTrace writes a JSON array of traces shaped after the OPEN.xtrace
// meta-model (Okanović et al., "APM Interoperability: an open format for
// representing execution traces"):
//
//	Trace {traceId, responseTime, exclusiveTime, root: SubTrace}
//	SubTrace {subTraceId, location: Location, responseTime, exclusiveTime, subTraces: [], root: Callable}
//	Location {host, runtimeEnvironment: "pid N", application: binary name, nodeType: "Go process"}
//	MethodInvocation {type, signature, packageName, className, methodName, parameterTypes,
//	                  returnType, timestamp, exitTime, responseTime, exclusiveTime, threadID,
//	                  labels, additionalInformation, children}
//
// responseTime and exclusiveTime are nanoseconds (OPEN.xtrace's TimedElement unit);
// timestamp and exitTime are Unix milliseconds. A process is one location, so a
// trace has one subtrace, without nested subtraces, whose times are its root
// call's. labels carry "error" and "panic"; additionalInformation the record's
// eoi, ess, goroutine, probe id, file:line, the size summary, and missingLevels
// when calls between this one and its parent have no record. A trace whose root
// call was not recorded gets a synthetic root (signature "(unrecorded calls)",
// label "synthetic") spanning its calls. A linked trace, begun in a goroutine
// that a go statement of another trace started, names that trace in its root
// call's additionalInformation: "linkedFrom" {traceId, goroutine, eoi, ess,
// function, timestamp} (OPEN.xtrace relates subtraces of one trace, and a
// linked trace is written when it completes, often before or long after its
// parent, so the relation is a reference, not nesting). Traces are written as
// they complete.
func writeOpenXTrace(w io.Writer, r *writer.Reader, opt Options) (Report, error) {
	var rep Report
	x := xtraceWriter{bw: bufio.NewWriterSize(w, 256<<10)}
	x.buf = append(x.buf, '[')
	if err := scanTrees(r, opt, &rep, x.trace, nil); err != nil {
		return rep, err
	}
	if x.n > 0 {
		x.buf = append(x.buf, '\n')
	}
	x.buf = append(x.buf, "]\n"...)
	if _, err := x.bw.Write(x.buf); err != nil {
		return rep, err
	}
	return rep, x.bw.Flush()
}

type xtraceWriter struct {
	bw   *bufio.Writer
	buf  []byte
	n    int
	sub  uint64   // subtrace ids
	info []xprobe // per probe, by probe.idx
	locs [][]byte // per stream index: the location object
	// stack is callable's walk, kept for the next trace.
	stack []xframe
}

// xframe is a call whose MethodInvocation callable is appending.
type xframe struct {
	n    *writer.Node
	next int // the child to append next
}

// xprobe is what a MethodInvocation repeats for every call of a probe, encoded once.
type xprobe struct {
	static []byte // `"signature":…,…,"returnType":…`
	fileLn string
}

func (x *xtraceWriter) location(s *stream) []byte {
	for len(x.locs) <= s.index {
		x.locs = append(x.locs, nil)
	}
	if x.locs[s.index] == nil {
		b := append([]byte(nil), '{')
		b = appendStringField(b, "host", s.host())
		b = appendStringField(b, "runtimeEnvironment", "pid "+strconv.Itoa(s.pid()))
		app := ""
		if s.hdr != nil {
			app = nameOr(filepath.Base(s.hdr.Binary), "")
		}
		b = appendStringField(b, "application", app)
		b = appendStringField(b, "nodeType", "Go process")
		x.locs[s.index] = append(b, '}')
	}
	return x.locs[s.index]
}

func (x *xtraceWriter) probeInfo(p *probe) *xprobe {
	if p.idx < 0 {
		var b []byte
		b = appendStringField(b, "signature", p.sig)
		parts, ok := splitSignature(p.sig)
		if p.def != nil {
			if p.def.Package != "" {
				b = appendStringField(b, "packageName", p.def.Package)
			}
			if p.def.Recv != "" {
				b = appendStringField(b, "className", p.def.Recv)
			}
			if p.def.Name != "" {
				b = appendStringField(b, "methodName", p.def.Name)
			}
		}
		if ok {
			b = appendKey(b, "parameterTypes")
			b = append(b, '[')
			for i, t := range parts.Params {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendString(b, t)
			}
			b = append(b, ']')
			switch len(parts.Results) {
			case 0:
			case 1:
				b = appendStringField(b, "returnType", parts.Results[0])
			default:
				rt := "("
				for i, t := range parts.Results {
					if i > 0 {
						rt += ", "
					}
					rt += t
				}
				b = appendStringField(b, "returnType", rt+")")
			}
		}
		info := xprobe{static: b}
		if p.def != nil && p.def.File != "" {
			info.fileLn = p.def.File + ":" + strconv.Itoa(p.def.Line)
		}
		p.idx = len(x.info)
		x.info = append(x.info, info)
	}
	return &x.info[p.idx]
}

func (x *xtraceWriter) trace(s *stream, t *writer.Trace) error {
	if len(t.Roots) == 0 {
		return nil
	}
	root := t.Roots[0]
	synthetic := len(t.Roots) > 1 || root.Missing > 0
	resp, tin := int64(root.Inclusive), root.Record.TIn
	var excl int64 // the synthetic root's
	if synthetic {
		tin = t.Roots[0].Record.TIn
		tout := t.Roots[0].Record.TOut
		var sum int64
		for _, n := range t.Roots {
			tin, tout = min(tin, n.Record.TIn), max(tout, n.Record.TOut)
			sum += int64(n.Inclusive)
		}
		resp, excl = tout-tin, max(tout-tin-sum, 0)
	}
	if x.n > 0 {
		x.buf = append(x.buf, ',')
	}
	x.n++
	x.sub++
	b := append(x.buf, "\n{"...)
	b = appendUintField(b, "traceId", s.traceID(t.ID))
	b = appendIntField(b, "responseTime", resp)
	b = appendIntField(b, "exclusiveTime", resp)
	b = appendKey(b, "root")
	b = append(b, '{')
	b = appendUintField(b, "subTraceId", x.sub)
	b = appendKey(b, "location")
	b = append(b, x.location(s)...)
	b = appendIntField(b, "responseTime", resp)
	b = appendIntField(b, "exclusiveTime", resp)
	b = append(b, `,"subTraces":[],"root":`...)
	if synthetic {
		b = append(b, '{')
		b = appendStringField(b, "type", "MethodInvocation")
		b = appendStringField(b, "signature", unrecordedName)
		b = appendIntField(b, "timestamp", s.wall(tin)/1e6)
		b = appendIntField(b, "exitTime", s.wall(tin+resp)/1e6)
		b = appendIntField(b, "responseTime", resp)
		b = appendIntField(b, "exclusiveTime", excl)
		b = append(b, `,"labels":["synthetic"]`...)
		if t.Link != nil {
			b = append(b, `,"additionalInformation":{`...)
			b = x.linkedFrom(b, s, t.Link)
			b = append(b, '}')
		}
		b = append(b, `,"children":[`...)
		for i, n := range t.Roots {
			if i > 0 {
				b = append(b, ',')
			}
			b = x.callable(b, s, n, nil)
		}
		b = append(b, "]}"...)
	} else {
		b = x.callable(b, s, root, t.Link)
	}
	x.buf = append(b, "}}"...)
	if len(x.buf) >= 64<<10 {
		if _, err := x.bw.Write(x.buf); err != nil {
			return err
		}
		x.buf = x.buf[:0]
	}
	return nil
}

// linkedFrom appends the "linkedFrom" field of a linked trace's root.
func (x *xtraceWriter) linkedFrom(b []byte, s *stream, l *writer.Link) []byte {
	b = appendKey(b, "linkedFrom")
	b = append(b, '{')
	b = appendUintField(b, "traceId", s.traceID(l.Parent))
	b = appendUintField(b, "goroutine", l.ParentGID)
	b = appendUintField(b, "eoi", uint64(l.EOI))
	b = appendUintField(b, "ess", uint64(l.ESS))
	if l.Probe != 0 {
		b = appendStringField(b, "function", s.probe(l.Probe).sig)
	}
	b = appendIntField(b, "timestamp", s.wall(l.Time)/1e6)
	return append(b, '}')
}

// callable appends n and its subtree as a MethodInvocation; link, for a
// linked trace's root, says where the trace came from. It walks the subtree
// with a stack of its own: a trace file can hold a call chain millions deep,
// more than a goroutine's stack holds in recursive calls.
func (x *xtraceWriter) callable(b []byte, s *stream, n *writer.Node, link *writer.Link) []byte {
	b = x.invocation(b, s, n, link)
	stack := append(x.stack[:0], xframe{n: n})
	for len(stack) > 0 {
		top := len(stack) - 1
		n, next := stack[top].n, stack[top].next
		if next < len(n.Children) {
			if next == 0 {
				b = append(b, `,"children":[`...)
			} else {
				b = append(b, ',')
			}
			stack[top].next++
			c := n.Children[next]
			b = x.invocation(b, s, c, nil)
			stack = append(stack, xframe{n: c})
			continue
		}
		if len(n.Children) > 0 {
			b = append(b, ']')
		}
		b = append(b, '}')
		stack = stack[:top]
	}
	x.stack = stack
	return b
}

// invocation appends the MethodInvocation of n without its children and
// without the closing brace.
func (x *xtraceWriter) invocation(b []byte, s *stream, n *writer.Node, link *writer.Link) []byte {
	r := &n.Record
	info := x.probeInfo(s.probe(r.Probe))
	b = append(b, `{"type":"MethodInvocation",`...)
	b = append(b, info.static...)
	b = appendIntField(b, "timestamp", s.wall(r.TIn)/1e6)
	b = appendIntField(b, "exitTime", s.wall(r.TOut)/1e6)
	b = appendIntField(b, "responseTime", int64(n.Inclusive))
	b = appendIntField(b, "exclusiveTime", int64(n.Exclusive))
	b = appendUintField(b, "threadID", r.GID)
	if f := flagNames(r.Flags); f != "" {
		b = append(b, `,"labels":["`...)
		b = append(b, strings.ReplaceAll(f, ",", `","`)...)
		b = append(b, `"]`...)
	}
	b = append(b, `,"additionalInformation":{`...)
	b = appendUintField(b, "eoi", uint64(r.EOI))
	b = appendUintField(b, "ess", uint64(r.ESS))
	b = appendUintField(b, "goroutine", r.GID)
	b = appendUintField(b, "probe", uint64(r.Probe))
	if info.fileLn != "" {
		b = appendStringField(b, "file", info.fileLn)
	}
	if r.Flags&writer.FlagSize != 0 {
		b = appendIntField(b, "size", r.Size)
	}
	if n.Missing > 0 {
		b = appendIntField(b, "missingLevels", int64(n.Missing))
	}
	if link != nil {
		b = x.linkedFrom(b, s, link)
	}
	return append(b, '}')
}
