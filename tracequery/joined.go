package tracequery

import (
	"fmt"
	"strings"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
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

// readsTraceID reports whether q, or a stream it reads, uses the calls
// stream's trace_id column.
func readsTraceID(q *query.Query) bool {
	found := false
	eachNode(q, func(n *query.Node) {
		if n.Kind == query.NCol && isTraceID(q, n) {
			found = true
		}
	})
	if found {
		return true
	}
	for _, b := range q.Sources {
		if b.Derived != nil && readsTraceID(b.Derived) {
			return true
		}
	}
	return false
}

// isTraceID reports whether the column n of q is the calls stream's
// trace_id, read directly or through a derived stream's column.
func isTraceID(q *query.Query, n *query.Node) bool {
	if n.Kind != query.NCol || n.Src < 0 || n.Src >= len(q.Sources) {
		return false
	}
	b := q.Sources[n.Src]
	if d := b.Derived; d != nil {
		i := n.Col
		if d.Window != nil {
			i -= 2 // window_start, window_end
		}
		return i >= 0 && i < len(d.Items) && isTraceID(d, d.Items[i].Expr)
	}
	return b.Stream == query.Calls && n.Col == query.CallTraceID
}

// eachNode calls f with every expression node of q's own clauses.
func eachNode(q *query.Query, f func(*query.Node)) {
	var walk func(n *query.Node)
	walk = func(n *query.Node) {
		if n == nil {
			return
		}
		f(n)
		for _, k := range n.Kids {
			walk(k)
		}
	}
	walk(q.Where)
	walk(q.Having)
	for _, it := range q.Items {
		walk(it.Expr)
	}
	for _, g := range q.GroupBy {
		walk(g)
	}
	for _, a := range q.Aggs {
		walk(a.Arg)
	}
}

// normalizeTraceIDs makes the trace ids a query compares trace_id with
// match as a tracing backend's do, whatever their case: each string literal
// compared with trace_id (=, !=, <, ..., IN) must be a W3C trace id, 32 hex
// digits in either case, or ” (the calls of traces that joined none), and
// becomes lower case as the column is; a LIKE pattern on trace_id becomes
// lower case. Anything else is an error at the literal, not a comparison
// that matches nothing. It edits the nodes of qs, which Run has just
// compiled and nobody else holds.
func normalizeTraceIDs(qs []*query.Query) error {
	var err error
	check := func(q *query.Query, col, lit *query.Node) {
		if err != nil || !isTraceID(q, col) || lit.Kind != query.NLit || lit.Val.T != query.String || lit.Val.S == "" {
			return
		}
		id, perr := traceconv.ParseTraceID(lit.Val.S)
		if perr != nil {
			err = &query.Error{Line: max(lit.Pos.Line, 1), Col: max(lit.Pos.Column, 1),
				Msg: fmt.Sprintf("comparing trace_id with %s: %v; '' finds the calls of traces that joined none", lit.Text, perr)}
			return
		}
		lit.Val = query.StringValue(tracecontext.FormatTraceID(id))
	}
	for _, q := range qs {
		eachNode(q, func(n *query.Node) {
			switch n.Kind {
			case query.NCmp:
				check(q, n.Kids[0], n.Kids[1])
				check(q, n.Kids[1], n.Kids[0])
			case query.NIn:
				for _, k := range n.Kids[1:] {
					check(q, n.Kids[0], k)
				}
			case query.NLike:
				if isTraceID(q, n.Kids[0]) {
					n.Pattern = strings.ToLower(n.Pattern)
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
