package monitor

import "github.com/tigrisgo/tigris/runtime/writer"

// Traces across goroutine boundaries.
//
// A trace is a call tree within one goroutine (Kieker's order index and depth
// assume one thread). A goroutine started by a go statement inside a traced
// call begins a trace of its own, linked to the place where it was started:
// the rewriter turns each go statement of an instrumented function into
//
//	if __tgl := __tigris.Fork(&__tigris_p[3]); __tgl.On() { go __tigris_go1(__tgl, f, x) } else { go f(x) }
//
// and generates, beside the probe table, one wrapper per go statement:
//
//	func __tigris_go1(__tgl __tigris.Link, __tgf func(int), __tga0 int) { __tgl.Adopt(); __tgf(__tga0) }
//
// Fork captures the parent's position (trace, order index, depth, goroutine,
// time) in the parent, before the function value and arguments are
// evaluated; the wrapper call carries it to the child in the go statement's
// own closure; Adopt leaves it in the child's context, and the child's first
// fine call, the root of its first trace, takes it: that trace follows the
// parent's sampling decision instead of drawing (a recorded trace's
// goroutines are recorded with it, an unrecorded one's are not), and when it
// is recorded, a link record (writer.Link) goes to the sink before its calls.
// When the parent is in no fine trace, Fork returns the zero Link and the go
// statement runs as written. docs/design-notes.md says why the link travels
// through the go statement rather than through g.parentGoid, and what it
// costs; docs/trace-format.md describes the link item.

// Link carries the position of a go statement in its goroutine's trace to
// the goroutine it starts. The zero Link means no trace. A Link is one
// pointer, so that the go statement outside a trace, where Fork returns it,
// costs a load and a branch; inside a recorded trace the position is
// allocated (48 bytes), inside an unrecorded one it is not needed.
type Link struct{ r *linkRec }

type linkRec struct {
	trace    uint64
	eoi, ess uint32
	goid     uint64
	t        int64
	p        *Probe // the function whose go statement it is
}

// unrecorded is the Link of a go statement in a trace that is not recorded:
// the goroutine's first trace is not recorded either.
var unrecorded = &linkRec{}

// On reports whether the go statement ran inside a fine trace, i.e. whether
// the child must start through the wrapper that adopts the link.
func (l *Link) On() bool { return l.r != nil }

// Fork returns the running goroutine's trace position for a go statement in
// the function of probe p, or the zero Link outside a fine trace. It inlines
// to one atomic load and a branch in a program that has never started a
// trace.
func Fork(p *Probe) Link {
	if lastTrace.Load() == 0 {
		return Link{}
	}
	return fork(p)
}

//go:noinline
//go:norace
func fork(p *Probe) Link {
	ctx := context()
	switch {
	case ctx.ess == 0:
		return Link{}
	case !ctx.sampled:
		return Link{unrecorded}
	}
	return Link{&linkRec{trace: ctx.trace, eoi: ctx.eoi, ess: ctx.ess, goid: ctx.goid, t: writer.Ticks(), p: p}}
}

// Adopt hands the link to the running goroutine, the one the go statement
// started: its first trace takes it. The wrapper calls it before the user's
// function.
func (l Link) Adopt() {
	if l.r != nil {
		adopt(l.r)
	}
}

//go:noinline
//go:norace
func adopt(r *linkRec) {
	context().link = r
}

// startRoot begins the trace of a root call: with a link adopted by this
// goroutine and not taken yet, the trace follows the parent's sampling
// decision and, when recorded, its link is written first; otherwise it draws
// (sampling.go). Only a goroutine's first trace takes the link: a worker's
// later traces are its own and draw with the rate in force. It reports
// whether the trace drew.
//
//go:norace
func (ctx *traceCtx) startRoot() (drew bool) {
	r := ctx.link
	if r == nil {
		ctx.sampleRoot()
		return true
	}
	ctx.link = nil
	ctx.startPieces()
	ctx.sampled = r != unrecorded
	if ctx.sampled {
		ctx.writeLink(r)
	}
	return false
}

// writeLink hands the link of the trace that starts to the sink, after the
// definition of the parent's probe (so that readers can name it).
//
//go:norace
func (ctx *traceCtx) writeLink(r *linkRec) {
	s := currentSink()
	if s == nil {
		return
	}
	wl := writer.Link{
		Trace: ctx.trace, GID: ctx.goid, Parent: r.trace, ParentGID: r.goid,
		EOI: r.eoi, ESS: r.ess, Time: r.t,
	}
	if p := r.p; p != nil && p.id != 0 {
		wl.Probe = p.id
		if p.defined.Load() == 0 && p.defined.CompareAndSwap(0, 1) {
			s.Define(p.def())
		}
	}
	ctx.rec = wl.Record()
	s.Write(&ctx.rec)
}
