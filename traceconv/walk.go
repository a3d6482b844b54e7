package traceconv

import (
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Tree is one call tree as Walk hands it out: the trace's call forest and
// what a reader of it needs from its stream.
type Tree struct {
	// Trace is the call forest; Trace.ID is the process's own trace id.
	// The nodes are the tree's own and may be kept after the visit.
	Trace *writer.Trace
	// ID is the trace id unique across the streams of the input (see the
	// trace ids of docs/trace-tools.md); Stream is the stream's index, from 0.
	ID     uint64
	Stream int
	// Header is the stream's file header, nil when none was readable.
	Header *writer.Header

	s *stream
}

// Func is the function a record names: its signature ("probe#N" for a probe
// the stream never defined) and where it is defined.
type Func struct {
	Signature string
	File      string
	Line      int
}

// Func returns the function of a node's record.
func (t *Tree) Func(n *writer.Node) Func {
	p := t.s.probe(n.Record.Probe)
	f := Func{Signature: p.sig}
	if p.def != nil {
		f.File, f.Line = p.def.File, p.def.Line
	}
	return f
}

// Def returns the definition of a node's probe, nil when the stream never
// defined it. A definition is one value for as long as it holds, so callers
// may key a cache on it.
func (t *Tree) Def(n *writer.Node) *writer.ProbeDef { return t.s.probe(n.Record.Probe).def }

// Wall converts a record time (the process's monotonic clock) to Unix
// nanoseconds; without a header it returns mono unchanged.
func (t *Tree) Wall(mono int64) int64 { return t.s.wall(mono) }

// Walk reads r, rebuilds its call trees as Summarize and Pprof do (memory
// follows the traces in flight, see Options.Lag and MaxPending) and calls
// visit with each tree, in the order they complete. It returns visit's first
// error; what the input lost is in the Report.
func Walk(r *writer.Reader, opt Options, visit func(t *Tree) error) (Report, error) {
	var rep Report
	err := scanTrees(r, opt, &rep, func(s *stream, t *writer.Trace) error {
		tree := Tree{Trace: t, ID: s.traceID(t.ID), Stream: s.index, Header: s.hdr, s: s}
		return visit(&tree)
	}, nil)
	return rep, err
}
