package writer

import (
	"cmp"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"slices"
	"time"
)

// Node is one call in a reconstructed call tree.
type Node struct {
	Record   Record
	Parent   *Node // nil for a root
	Children []*Node
	// Missing is the number of call levels between Parent and this node that have
	// no record (sampled out, dropped, or not instrumented): ESS - Parent.ESS - 1, or
	// ESS for a root.
	Missing int
	// Inclusive is TOut - TIn. Exclusive is Inclusive minus the children's Inclusive
	// (never below zero); the time of missing levels stays with the nearest ancestor.
	// For an unfinished call (Record.Unfinished: it had not returned when the
	// writer closed) both are the time it had run by then, lower bounds of a
	// duration that is unknown; summaries leave such calls out of durations.
	Inclusive time.Duration
	Exclusive time.Duration
}

// Trace is the call forest of one trace id, in execution order.
type Trace struct {
	ID    uint64
	Roots []*Node // usually one; more when the top call is missing or the trace has several
	Nodes []Node  // every call, in EOI order
	// Link says which trace's go statement started the goroutine this trace
	// began in; nil for a trace that is not linked (TraceBuilder.AddLink).
	Link *Link
	// Remote is the trace of another system this trace joined (its root ran
	// inside a request with a W3C or OpenTelemetry trace context); nil when
	// it joined none (TraceBuilder.AddRemote).
	Remote *Remote
}

// TraceBuilder collects records and builds their call trees with Kieker's
// execution-order-index / execution-stack-size semantics. The zero value is ready.
type TraceBuilder struct {
	byID  map[uint64]int
	recs  [][]Record
	order []uint64
	links map[uint64]*Link // by child trace
	// remotes are the remote parents, by trace.
	remotes map[uint64]*Remote
}

// AddRemote records that trace m.Trace joined a trace of another system;
// Traces sets its Trace.Remote. A remote parent whose trace has no record
// builds no trace.
func (b *TraceBuilder) AddRemote(m *Remote) {
	if b.remotes == nil {
		b.remotes = make(map[uint64]*Remote)
	}
	c := *m
	b.remotes[m.Trace] = &c
}

// AddLink records that trace l.Trace is linked; Traces sets its Trace.Link. A
// link whose trace has no record builds no trace.
func (b *TraceBuilder) AddLink(l *Link) {
	if b.links == nil {
		b.links = make(map[uint64]*Link)
	}
	c := *l
	b.links[l.Trace] = &c
}

// Add copies r into the builder.
func (b *TraceBuilder) Add(r *Record) {
	if b.byID == nil {
		b.byID = make(map[uint64]int)
	}
	i, ok := b.byID[r.Trace]
	if !ok {
		i = len(b.recs)
		b.byID[r.Trace] = i
		b.recs = append(b.recs, nil)
		b.order = append(b.order, r.Trace)
	}
	b.recs[i] = append(b.recs[i], *r)
}

// Traces builds every trace added so far, ordered by trace id.
func (b *TraceBuilder) Traces() []*Trace {
	out := make([]*Trace, 0, len(b.recs))
	for i, id := range b.order {
		t := buildTrace(id, b.recs[i])
		t.Link = b.links[id]
		t.Remote = b.remotes[id]
		out = append(out, t)
	}
	slices.SortFunc(out, func(x, y *Trace) int { return cmp.Compare(x.ID, y.ID) })
	return out
}

// BuildTraces groups records by trace id and builds one call forest per trace.
func BuildTraces(recs []Record) []*Trace {
	var b TraceBuilder
	for i := range recs {
		b.Add(&recs[i])
	}
	return b.Traces()
}

// buildTrace orders a trace's records by EOI and gives each the nearest preceding
// record with a smaller ESS as its parent. With every call recorded that is the
// record at ESS-1 (Kieker's rule); with calls missing it is the closest ancestor that
// was recorded. A candidate on the same goroutine that had returned before the call
// began is not an ancestor: it is skipped (this matters when a sibling of the real,
// missing parent was recorded). A monotonic stack finds the parent in linear time.
func buildTrace(id uint64, recs []Record) *Trace {
	slices.SortStableFunc(recs, func(x, y Record) int { return cmp.Compare(x.EOI, y.EOI) })
	t := &Trace{ID: id, Nodes: make([]Node, len(recs))}
	stack := make([]*Node, 0, 16)
	for i := range recs {
		n := &t.Nodes[i]
		n.Record = recs[i]
		n.Inclusive = time.Duration(n.Record.TOut - n.Record.TIn)
		for len(stack) > 0 && !mayContain(&stack[len(stack)-1].Record, &n.Record) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			n.Missing = int(n.Record.ESS)
			t.Roots = append(t.Roots, n)
		} else {
			p := stack[len(stack)-1]
			n.Parent = p
			n.Missing = int(n.Record.ESS - p.Record.ESS - 1)
			p.Children = append(p.Children, n)
		}
		stack = append(stack, n)
	}
	for i := range t.Nodes {
		n := &t.Nodes[i]
		n.Exclusive = n.Inclusive
		for _, c := range n.Children {
			n.Exclusive -= c.Inclusive
		}
		n.Exclusive = num.Max(n.Exclusive, 0)
	}
	return t
}

// mayContain reports whether p, which precedes r in EOI order, can be an ancestor of r.
func mayContain(p, r *Record) bool {
	if p.ESS >= r.ESS {
		return false
	}
	return p.GID != r.GID || p.TOut >= r.TIn
}
