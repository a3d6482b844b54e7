package monitor

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Calls still running when the writer closes.
//
// A fine record is written when its call returns, so a call that has not
// returned when the program exits (the function handling the shutdown, a
// request in flight when os.Exit runs) would leave no record. So Start notes
// every fine call in its goroutine's context: the last openRing levels of the
// context's stack, each an openCall of three words (entry time, probe and
// order index, and a tag that checks them), in a ring indexed by depth. The
// exit does not touch them: ctx.ess, which it puts back, says which are open.
//
// When the writer closes (closeSink, from the exit hook, Shutdown or the
// program's own exit), every open sampled call is written as a record with
// writer.FlagUnfinished and the close's time as its exit, and the open calls
// that cannot be (deeper than the ring, or changing while they are read) are
// counted in a loss record with writer.LossUnfinished.
//
// Other goroutines keep running while the writer closes, so their contexts
// are read while they may change. The design for it:
//
//   - The words read from another goroutine are written with setOwn (a plain
//     store on amd64, whose stores are seen in program order; an atomic store
//     elsewhere and under the race detector) and read with atomic loads. The
//     entry's words are stored before the depth that makes the entry open.
//   - Each entry checks itself: its tag mixes its entry time, probe, order
//     index, depth, sampling and the trace. An entry read half old, half new
//     fails its check and is counted as lost, never written wrong.
//   - A call is recorded once: a call that ends while the writer closes (its
//     exit finds the closing sink, whose Sink is nil) and the close both claim
//     the entry by swapping its tag for 0, and only the winner writes it (the
//     exit as a finished call, the close as an unfinished one). closeSink
//     first stops the world (quiesce) after installing the closing sink, so
//     every exit that saw the open writer has put its depth back by then.
//
// None of this costs the off path or the coarse path anything; the fine entry
// makes three more stores into its context's cache line, the fine exit none
// (the closing sink is tested only where the exit finds no sink).

// openRing is how many open calls of a goroutine, the innermost, the context
// keeps: the function running at exit and its callers up to openRing levels.
// A power of two.
const openRing = 16

// openCall is one open fine call (see above); tag 0: none, or claimed.
type openCall struct {
	t0  atomic.Uint64 // entry time, ticks
	id  atomic.Uint64 // probe id << 32 | order index
	tag atomic.Uint64 // openTag of the others, the depth, the sampling and the trace
}

// openTag checks an entry: a mix of its words in which changing any of them
// changes the result, never 0.
func openTag(t0, id, trace uint64, depth uint32, sampled bool) uint64 {
	m := uint64(depth) << 1
	if sampled {
		m |= 1
	}
	x := (t0 ^ id*0x9E3779B97F4A7C15 ^ trace*0xC2B2AE3D27D4EB4F ^ m) * 0xBF58476D1CE4E5B9
	return (x ^ x>>31) | 1
}

// noteOpen notes the fine call that Start just began at depth d of ctx, of
// probe id and order index eoi, at t0 (before ctx.ess is raised past it).
// go:norace: see traceCtx.
//
//go:norace
func (ctx *traceCtx) noteOpen(t0 int64, id uint64, d uint32, sampled bool) {
	e := &ctx.open[d&(openRing-1)]
	setOwn(&e.t0, uint64(t0))
	setOwn(&e.id, id)
	setOwn(&e.tag, openTag(uint64(t0), id, ctx.trace, d, sampled))
}

// claimOpen claims the entry of c, a sampled call of ctx at depth d, for its
// exit while the writer closes: false when the close wrote the call as
// unfinished. An entry that a deeper call took over (the call was more than
// openRing levels from the innermost) was never written by the close.
//
//go:norace
func (ctx *traceCtx) claimOpen(c *Call, d uint32) bool {
	e := &ctx.open[d&(openRing-1)]
	want := openTag(uint64(c.t0), uint64(c.p.id)<<32|uint64(c.eoi()), ctx.trace, d, true)
	for {
		switch tag := e.tag.Load(); {
		case tag == 0:
			return false
		case tag != want:
			return true
		case e.tag.CompareAndSwap(want, 0):
			return true
		}
	}
}

// endClosing ends c, a sampled fine call at depth d of ctx, whose exit at t1
// found the writer closing (see End): it counts the call and, unless the
// close wrote it as unfinished, writes its record to the closing writer.
// Only while the writer closes; never on a program's ordinary path.
//
//go:noinline
//go:norace
func (c *Call) endClosing(cl *closing, ctx *traceCtx, p *Probe, t1 int64, f callFacts, size int64, d uint32, gp unsafe.Pointer) {
	closingEnds.Add(1)
	defer closingEnds.Add(-1)
	rec := ctx.claimOpen(c, d)
	if rec {
		f |= callRecorded
	}
	p.addCall(t1-c.t0, f, size, 0)
	if p.taps.Load() != nil {
		p.tap(c.t0, t1, f, gp, ctx, d)
	}
	if rec {
		c.record(cl.s, ctx, p, t1, f, size)
	}
}

// closingEnds counts the exits in endClosing: the close waits for them, so
// that a call claimed by its exit is written before the writer closes.
var closingEnds atomic.Int64

// closing is the sink box while the writer closes (closeSink): s is nil, so
// fine exits take the path for no sink, where they find closing and claim
// their call (Call.endClosing).
type closing struct {
	s writer.Sink // the writer being closed
}

// closeSink ends fine recording and returns the sink that was current (nil if
// none), open still, with a record for every sampled call that had not
// returned (writer.FlagUnfinished) and a loss for those it could not write.
// The caller closes it. Called once, by shutdown.
func closeSink() writer.Sink {
	b := sink.Load()
	if b == nil || b.s == nil {
		return SetSink(nil)
	}
	old := b.s
	sink.Store(&sinkBox{closing: &closing{s: old}})
	quiesce() // every exit that saw the open writer has put its depth back
	t := ticksNow()
	var lost uint64
	forEachContext(func(ctx *traceCtx) { lost += ctx.writeOpen(old, t) })
	if l, ok := old.(interface{ Lose(writer.Loss) }); ok && lost > 0 {
		l.Lose(writer.Loss{Count: lost, From: t, To: t, Reason: writer.LossUnfinished})
	}
	unfinishedLost.Store(lost)
	if lost > 0 {
		report(fmt.Errorf("%d calls still running when the writer closed were not recorded (more than %d open calls deep, or changing while read); the trace counts them in a loss record", lost, openRing))
	}
	SetSink(nil)
	// An exit that claimed its call before the scan above reached it writes
	// it now; wait (boundedly) until it has, before the writer closes.
	for i := 0; i < 10000 && closingEnds.Load() > 0; i++ {
		runtime.Gosched()
	}
	return old
}

// unfinishedLost is how many open calls the close could not write.
var unfinishedLost atomic.Uint64

// quiesce returns after every goroutine has reached a safe point since it
// was called: runtime.ReadMemStats stops the world.
func quiesce() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
}

// forEachContext calls f with every goroutine's trace context that belongs to
// a goroutine still alive as far as the monitor can tell: its g holds the
// context's goroutine id (a g reused by a goroutine that made no fine call
// holds another). Without the layout, every context of the portable slots.
func forEachContext(f func(*traceCtx)) {
	if t := gslots.t.Load(); t != nil {
		for i := range t.slots {
			g := t.slots[i].g.Load()
			ctx := t.slots[i].ctx.Load()
			if g == 0 || ctx == nil {
				continue
			}
			// gs are never freed: the word stays readable.
			gp := *(*unsafe.Pointer)(unsafe.Pointer(&g))
			goid := (*atomic.Uint64)(unsafe.Add(gp, glayout.goid)).Load()
			if goid != ctxWord(&ctx.goid).Load() {
				continue
			}
			f(ctx)
		}
	}
	portableSlots.RLock()
	defer portableSlots.RUnlock()
	for _, ctx := range portableSlots.m {
		f(ctx)
	}
}

// ctxWord reads a context's word that only its goroutine writes.
func ctxWord(p *uint64) *atomic.Uint64 { return (*atomic.Uint64)(unsafe.Pointer(p)) }

// writeOpen writes ctx's open sampled calls to s as unfinished records ending
// at t and returns how many open calls it could not write.
func (ctx *traceCtx) writeOpen(s writer.Sink, t int64) (lost uint64) {
	depth := (*atomic.Uint32)(unsafe.Pointer(&ctx.ess)).Load()
	trace := ctxWord(&ctx.trace).Load()
	goid := ctxWord(&ctx.goid).Load()
	from := uint32(0)
	if depth > openRing {
		from = depth - openRing
	}
	var r writer.Record
	for d := from; d < depth; d++ {
		e := &ctx.open[d&(openRing-1)]
		tag := e.tag.Load()
		t0, id := e.t0.Load(), e.id.Load()
		switch tag {
		case 0: // claimed by its exit, which wrote it
			continue
		case openTag(t0, id, trace, d, false): // not sampled
			continue
		case openTag(t0, id, trace, d, true):
		default:
			lost++ // changing while read
			continue
		}
		if d == from && from > 0 {
			lost += uint64(from) // the shallower calls of a sampled trace
		}
		if !e.tag.CompareAndSwap(tag, 0) {
			continue // its exit claimed it
		}
		p := probeByID(uint32(id >> 32))
		if p == nil {
			lost++
			continue
		}
		p.define(s)
		r = writer.Record{
			Probe: p.id, Flags: writer.FlagUnfinished, EOI: uint32(id), ESS: d,
			Trace: trace, GID: goid, TIn: int64(t0), TOut: t,
		}
		s.Write(&r)
	}
	return lost
}

// probeByID is the probe with id, nil if there is none.
func probeByID(id uint32) *Probe {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if id == 0 || int(id) > len(registry.probes) {
		return nil
	}
	return registry.probes[id-1]
}
