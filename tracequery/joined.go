package tracequery

import (
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// joinedWindow is how many traces' W3C trace ids a query over files keeps,
// the latest, as tigris export does: a remote parent comes right before its
// trace's records, so only a trace still running 65,536 joined traces later
// loses its trace_id.
const joinedWindow = 1 << 16

// joined holds the W3C trace ids of the traces that joined a request's
// trace (remote-parent items), as the calls stream's trace_id column shows
// them: one string per trace, shared by its calls.
type joined struct {
	ids   map[uint64]string
	order []uint64 // the traces of ids, oldest first
}

// add keeps the trace id of the trace m.Trace.
func (j *joined) add(m *writer.Remote) {
	if j.ids == nil {
		j.ids = make(map[uint64]string)
	}
	if _, ok := j.ids[m.Trace]; !ok {
		j.order = append(j.order, m.Trace)
	}
	j.ids[m.Trace] = tracecontext.FormatTraceID(m.TraceID)
	if len(j.order) > joinedWindow {
		delete(j.ids, j.order[0])
		j.order = j.order[1:]
	}
}

// of is the W3C trace id trace joined, "" if none.
func (j *joined) of(trace uint64) string { return j.ids[trace] }
