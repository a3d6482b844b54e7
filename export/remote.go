package export

import (
	"encoding/binary"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Traces that joined a trace of another system. The program hands the
// writer a remote parent (writer.Remote) before the records of a trace whose
// root call ran inside a request with a W3C traceparent or an OpenTelemetry
// span context (runtime/monitor/join.go); the writer's per-P queues may put
// records of the trace before it in the file (sentBefore). The trace's spans then carry the request's
// trace id instead of the one tigris derives (ids.go), and its roots are
// children of the remote parent's span, so that a tracing backend shows the
// method calls nested under the service's span of the request. Span ids stay
// tigris's own (a function of the stream, the tigris trace and the order
// index): unique in the request's trace as in tigris's, and the same when a
// batch is sent again. A go statement's link to a trace that joined names
// that trace by the request's trace id too. docs/export.md ("Joining the
// service's traces") shows the mapping.

// remoteWindow is how many remote parents a stream keeps, the latest: a
// trace's is forgotten when it is sent (complete or final), but a trace whose
// records were lost, or whose spans wait for a link, would keep its own.
const remoteWindow = 1 << 16

// addRemote keeps the remote parent of trace m.Trace until its spans are made.
func (st *stream) addRemote(m *writer.Remote) {
	if st.remotes == nil {
		st.remotes = make(map[uint64]*writer.Remote)
	}
	if st.remotes[m.Trace] == nil {
		st.remoteOrder = append(st.remoteOrder, m.Trace)
	}
	c := *m
	st.remotes[m.Trace] = &c
	for len(st.remoteOrder) > 0 && (len(st.remoteOrder) > remoteWindow || st.remotes[st.remoteOrder[0]] == nil) {
		delete(st.remotes, st.remoteOrder[0])
		st.remoteOrder = st.remoteOrder[1:]
	}
}

// sentBefore reports whether spans of trace were sent already, complete or
// in parts: a remote parent read now is too late for them. The writer hands
// a trace's remote parent over before its records, but drains its queues
// one P at a time, so records of a goroutine that changed P can come first;
// the settling window (assemble.go) holds a complete trace long enough for
// the remote parent too, unless the queues put it further behind.
func (st *stream) sentBefore(trace uint64) bool {
	if st.completed.has(trace) {
		return true
	}
	t := st.traces[trace]
	return t != nil && t.partial
}

// withRemotes gives the spans of traces that joined a trace of another
// system their remote parent, and the links to such traces the request's
// trace id. spans are being emitted: they are the shipper's from now on.
func (st *stream) withRemotes(spans []spanItem) {
	if len(st.remotes) == 0 {
		return
	}
	for i := range spans {
		s := &spans[i]
		s.remote = st.remotes[s.rec.Trace]
		if s.link != nil {
			s.linkRemote = st.remotes[s.link.trace]
		}
	}
}

// traceIDOf is the trace id a span of trace in stream carries: the remote
// parent's when the trace joined one (m not nil), tigris's otherwise; lo is
// the low half of tigris's id, of which span ids are functions.
func traceIDOf(stream, trace uint64, m *writer.Remote) (id [16]byte, lo uint64) {
	hi, lo := traceID(stream, trace)
	if m != nil {
		return m.TraceID, lo
	}
	binary.BigEndian.PutUint64(id[:], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id, lo
}
