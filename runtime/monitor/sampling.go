package monitor

import (
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Sampling is per trace: a trace root decides, with the rate in force, whether
// the whole trace is recorded, so a recorded trace is complete. A trace that
// lives as long as its goroutine (an instrumented main, a worker loop) would
// then be all or nothing, and a new rate (SetSampling, the overhead budget)
// would never reach it. So a trace that runs for longer than pieceWindow is
// sampled in pieces: once a call of it has run for a whole window, every call
// it makes from then on (each top-level iteration of a loop) is a piece that
// decides anew, as a root would, and its whole subtree follows that decision.
// Calls shorter than the window are never cut. The pieces keep the trace's id
// and order index; a reader sees one trace whose long call has gaps (missing
// levels, as for any call not recorded). docs/analysis.md explains it for
// users.
//
// Finding the long call costs no clock read: the exits already have the time.
// Time is cut into periods of at least pieceWindow, and the context keeps the
// shallowest depth entered in the current and in the previous period. When a
// call exits back to depth d and no call at a depth below d was entered in
// either period, the caller at depth d-1 started before the previous period did,
// so it has run for at least a window: depth d becomes the piece depth, and
// every later exit back to d makes the next call there decide anew, until the
// caller returns.

// pieceWindow is how long a call runs before its callees are sampled as pieces:
// longer than most requests, so their traces stay whole, and well below the
// analysis interval (2 minutes by default), so a new rate reaches long-lived
// traces soon. A variable for tests.
var pieceWindow = int64(10 * time.Second)

// pieceTicks is pieceWindow in the probes' clock (clock.go): the exits'
// times are its ticks. The rate is read once per window length (a trace root
// starts a period, and reading the calibration costs a clock read): the
// calibration's refinements are far below what a window of seconds resolves.
func pieceTicks() int64 {
	if !useTSC {
		return pieceWindow
	}
	if c := pieceCache.Load(); c != nil && c.window == pieceWindow {
		return c.ticks
	}
	c := &pieceConv{window: pieceWindow, ticks: int64(float64(pieceWindow) / writer.NanosPerTick())}
	pieceCache.Store(c)
	return c.ticks
}

type pieceConv struct{ window, ticks int64 }

var pieceCache atomic.Pointer[pieceConv]

// noDepth is larger than any depth.
const noDepth = ^uint32(0)

// pieces is a trace context's state for sampling in pieces.
type pieces struct {
	periodEnd int64  // nanotime when the current period ends; 0 before the trace's first exit
	curMin    uint32 // the shallowest depth entered in the current period
	prevMin   uint32 // and in the previous one
	depth     uint32 // the piece depth: calls at this depth decide anew; 0 for none
	redecide  bool   // the next call entered decides anew
}

// sampleRoot starts a trace at its root: the sampling decision for the whole
// trace, and no period yet.
func (ctx *traceCtx) sampleRoot() {
	ctx.sampled = sampled()
	ctx.startPieces()
}

// startPieces starts the piece bookkeeping of a trace at its root: no period
// yet. A trace that took its decision from a link (link.go) is cut into
// pieces like any other.
func (ctx *traceCtx) startPieces() {
	ctx.pieces = pieces{curMin: 0, prevMin: noDepth}
}

// sampleCall is called at the entry of every call below the root, with ctx.ess
// the call's depth.
func (ctx *traceCtx) sampleCall() {
	pc := &ctx.pieces
	if ctx.ess < pc.curMin {
		pc.curMin = ctx.ess
	}
	if pc.redecide {
		ctx.redecide()
	}
}

// redecide is the decision of a piece: the call entered draws anew.
func (ctx *traceCtx) redecide() {
	ctx.pieces.redecide = false
	ctx.sampled = sampled()
}

// quiet reports whether exited would change nothing for an exit back to
// depth d > 0 at t1: no piece depth set, the period still running, and a
// call shallower than d entered in this period or the last. It is most
// exits, and inlines.
func (pc *pieces) quiet(d uint32, t1 int64) bool {
	return pc.depth == 0 && t1 < pc.periodEnd && (pc.prevMin < d || pc.curMin < d)
}

// exited is called at every exit, after ctx.ess went back to the depth of the
// call that exited; t1 is the exit's time.
func (ctx *traceCtx) exited(t1 int64) {
	pc := &ctx.pieces
	d := ctx.ess
	if pc.depth != 0 {
		switch {
		case d == pc.depth:
			pc.redecide = true // back in the long call's body: its next call is a piece
			return
		case d > pc.depth:
			return
		}
		pc.depth = 0 // the long call returned
	}
	if t1 >= pc.periodEnd {
		pc.prevMin, pc.curMin = pc.curMin, noDepth
		pc.periodEnd = t1 + pieceTicks()
	}
	if d > 0 && pc.prevMin >= d && pc.curMin >= d {
		pc.depth = d
		pc.redecide = true
	}
}
