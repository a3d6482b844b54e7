package tracequery

import (
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// The trace_id column over files.
//
// A remote-parent item (writer.Remote) names the W3C trace id a trace
// joined. The monitor hands it to the writer when the trace's root call
// starts, before any record of the trace, but the asynchronous writer drains
// one ring per P, each on its own: a record that a goroutine wrote on
// another P after the remote parent can reach the file before it, at a
// distance only the writer's scheduling bounds (a pass drains the rings one
// after another; a producer whose ring is full drains it itself while the
// other rings wait). So the record pass cannot learn a trace's id from the
// items before its records. When the query reads trace_id, the catalog pass,
// which reads every item anyway, keeps the remote parents, and the record
// pass gives every record of a joined trace its id whatever the order.
//
// Memory is one entry per joined trace (84 bytes measured with a million),
// at most Options.MaxJoined of them; the remote parents past that bound are
// counted (Summary.JoinedDropped, a note and the traceIdsNotKept statistic)
// and their traces' calls show trace_id ''. CPU is a map lookup per trace
// (the recent traces' answers are kept formatted): on 2,000,000 records of
// 500,000 traces, half of them joined, WHERE trace_id took 1.65-1.80 s of
// CPU where WHERE trace took 1.26-1.31 s (TestTraceIDInterleaved's layout,
// tracegen.Concurrent(500000, 100, 4, 9), on the shared 2-core machine).

// DefaultMaxJoined is Options.MaxJoined's default: 2,097,152 joined traces,
// about 180 MB.
const DefaultMaxJoined = 1 << 21

// traceKey names a trace across the streams of the files: each process
// numbers its traces from 1.
type traceKey struct{ stream, trace uint64 }

// joined holds the W3C trace ids of the traces that joined a request's
// trace (remote-parent items), by stream and trace.
type joined struct {
	max     int
	ids     map[traceKey][16]byte
	dropped uint64 // remote parents not kept: past max

	// The recent answers of of, formatted, by trace: the calls of the
	// traces running at once interleave, and one string serves all the
	// calls of a trace.
	recent [recentTraces]recentID
}

// recentTraces is how many traces' answers joined keeps formatted: more
// than a service's requests at once, mostly.
const recentTraces = 256

type recentID struct {
	k  traceKey
	id string
	ok bool
}

func newJoined(max int) *joined {
	if max <= 0 {
		max = DefaultMaxJoined
	}
	return &joined{max: max, ids: make(map[traceKey][16]byte)}
}

// add keeps the trace id that trace m.Trace of stream joined.
func (j *joined) add(stream uint64, m *writer.Remote) {
	k := traceKey{stream, m.Trace}
	if _, ok := j.ids[k]; !ok && len(j.ids) >= j.max {
		j.dropped++
		return
	}
	j.ids[k] = m.TraceID
	j.recent[k.slot()].ok = false
}

func (k traceKey) slot() uint64 { return (k.trace ^ k.stream) % recentTraces }

// of is the W3C trace id trace of stream joined, "" if none (or j is nil:
// the query reads no trace_id).
func (j *joined) of(stream, trace uint64) string {
	if j == nil {
		return ""
	}
	k := traceKey{stream, trace}
	e := &j.recent[k.slot()]
	if e.ok && e.k == k {
		return e.id
	}
	s := ""
	if id, ok := j.ids[k]; ok {
		s = tracecontext.FormatTraceID(id)
	}
	*e = recentID{k, s, true}
	return s
}
