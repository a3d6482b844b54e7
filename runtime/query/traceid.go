package query

import (
	"encoding/hex"
	"strings"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
)

// The calls stream's trace_id column holds W3C trace ids as 32 lower-case
// hex digits, or "" for a trace that joined none. A tracing backend shows
// them in either case, so the ids a query compares trace_id with are
// checked and made lower case where the query is compiled: in the program
// for a live query, over files for tigris query. An id that is no trace id
// is an error at its literal rather than a comparison that matches nothing.

// normalizeTraceIDs checks every string literal q compares trace_id with
// (=, !=, <, ..., IN): 32 hex digits in either case, not all zero, or "";
// it becomes lower case, and so does a LIKE pattern on trace_id. It edits
// q's nodes, which the checker has just built.
func (c *checker) normalizeTraceIDs(q *Query) error {
	var err error
	check := func(col, lit *Node) {
		if err != nil || !q.isTraceID(col) || lit.Kind != NLit || lit.Val.T != String || lit.Val.S == "" {
			return
		}
		id, ok := parseTraceID(lit.Val.S)
		if !ok {
			err = c.errorf(lit.Pos, "comparing trace_id with %s: not a W3C trace id (32 hex digits, not all zero); '' finds the calls of traces that joined none", lit.Text)
			return
		}
		lit.Val = StringValue(tracecontext.FormatTraceID(id))
	}
	q.eachNode(func(n *Node) {
		switch n.Kind {
		case NCmp:
			check(n.Kids[0], n.Kids[1])
			check(n.Kids[1], n.Kids[0])
		case NIn:
			for _, k := range n.Kids[1:] {
				check(n.Kids[0], k)
			}
		case NLike:
			if q.isTraceID(n.Kids[0]) {
				n.Pattern = strings.ToLower(n.Pattern)
			}
		}
	})
	return err
}

// parseTraceID reads a W3C trace id in either case.
func parseTraceID(s string) (id [16]byte, ok bool) {
	if len(s) != 2*len(id) {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil || id == ([16]byte{}) {
		return [16]byte{}, false
	}
	return id, true
}

// ReadsTraceID reports whether q, or a stream it reads, uses the calls
// stream's trace_id column: a reader of trace files must then find each
// trace's remote parent, wherever it lies in the files.
func (q *Query) ReadsTraceID() bool {
	found := false
	q.eachNode(func(n *Node) {
		if n.Kind == NCol && q.isTraceID(n) {
			found = true
		}
	})
	if found {
		return true
	}
	for _, b := range q.Sources {
		if b.Derived != nil && b.Derived.ReadsTraceID() {
			return true
		}
	}
	return false
}

// isTraceID reports whether the column n of q is the calls stream's
// trace_id, read directly or through a derived stream's column.
func (q *Query) isTraceID(n *Node) bool {
	if n.Kind != NCol || n.Src < 0 || n.Src >= len(q.Sources) {
		return false
	}
	b := q.Sources[n.Src]
	if d := b.Derived; d != nil {
		i := n.Col
		if d.Window != nil {
			i -= 2 // window_start, window_end
		}
		return i >= 0 && i < len(d.Items) && d.isTraceID(d.Items[i].Expr)
	}
	return b.Stream == Calls && n.Col == CallTraceID
}

// eachNode calls f with every expression node of q's own clauses.
func (q *Query) eachNode(f func(*Node)) {
	var walk func(n *Node)
	walk = func(n *Node) {
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
