package monitor

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The functions that touch a traceCtx are go:norace. A context belongs to
// one g, and a g is handed from an ended goroutine to a new one by the
// scheduler, which orders the two; the race detector does not see that
// hand-off and would report the new goroutine's first use of the context as
// a race with the old one's last (in every program built with -race that
// traces in fine mode).

// traceCtx is the per-goroutine trace context (Kieker's trace id, order index and
// stack depth). It lives behind the goroutine-local slot and is touched only by its
// own goroutine. A g struct is reused for later goroutines, so goid tells whether
// the context still belongs to the running goroutine.
//
// A new goroutine starts a new trace: contexts are never shared, so no atomics are
// needed, and the call tree of a trace stays a tree within one goroutine. The
// record's GID field lets readers relate traces of the same goroutine. gslots.go
// finds the running goroutine's context.
type traceCtx struct {
	goid    uint64
	trace   uint64
	eoi     uint32
	ess     uint32
	sampled bool
	pieces  pieces // long-lived traces are sampled in pieces (sampling.go)
	// link is adopted from the go statement that started the goroutine, until
	// its first trace takes it (link.go).
	link *linkRec
	// nextTrace and endTrace are the unused part of the block of trace ids the
	// context holds (newTrace).
	nextTrace, endTrace uint64
	// remote is the W3C trace id that trace remoteTrace joined (join.go);
	// a trace id tells whether it is the running trace's, so nothing is
	// reset at a root.
	remote      [16]byte
	remoteTrace uint64
	// rec is the record being handed to the sink. A local would escape (Sink.Write
	// is an interface call) and cost an allocation per fine call; a sink must not
	// retain the record, and only this goroutine uses its context.
	rec writer.Record
	// open are the innermost open calls, by depth (open.go): the close of
	// the writer reads them from another goroutine.
	open [openRing]openCall
}

var lastTrace atomic.Uint64

// traceBlock is how many trace ids a context takes from lastTrace at a time:
// a trace root then costs no shared atomic, which producers on different
// CPUs would contend for. Ids stay unique in the process; they are no longer
// in the order the traces started.
const traceBlock = 1024

// newTrace returns the next id of the context's block, taking a new block
// when it is used up.
//
//go:norace
func (ctx *traceCtx) newTrace() uint64 {
	if ctx.nextTrace == ctx.endTrace {
		ctx.endTrace = lastTrace.Add(traceBlock) + 1
		ctx.nextTrace = ctx.endTrace - traceBlock
	}
	id := ctx.nextTrace
	ctx.nextTrace++
	return id
}

// sampleThreshold is the sampling rate scaled to 2^32; a call is sampled when a
// cheap random number falls below it. 1<<32 means every call.
var sampleThreshold atomic.Uint64

func init() { sampleThreshold.Store(1 << 32) }

func sampled() bool {
	t := sampleThreshold.Load()
	return t >= 1<<32 || uint64(cheaprand()) < t
}

// flushOnPanic flushes the trace when a panic leaves a goroutine's outermost
// probed call: an unrecovered panic ends the program without running exit
// hooks, and the records that explain the crash would be lost. A panic that
// is recovered further up costs one flush. Bounded in time like every flush
// on the program's path.
func flushOnPanic() {
	if err := flushWithin(panicFlushLimit); err != nil {
		report(fmt.Errorf("flush on panic: %v", err))
	}
}

// panicFlushLimit bounds the flush when a panic unwinds.
const panicFlushLimit = time.Second

// record hands the call's record to s through Sink.Write, built in the
// goroutine's context. The budget's calibration times it into a private
// sink: it is what a record costs where it cannot be built in place.
//
//go:norace
func (c *Call) record(s writer.Sink, ctx *traceCtx, p *Probe, t1 int64, f callFacts, size int64) {
	if p.defined.Load() == 0 {
		p.define(s)
	}
	// Field by field: a composite literal is built on the stack and copied.
	r := &ctx.rec
	r.Probe, r.EOI, r.ESS = p.id, c.eoi(), c.ess()
	r.Trace, r.GID = ctx.trace, ctx.goid
	r.TIn, r.TOut = c.t0, t1
	r.Flags, r.Size = recordFlags(f, size)
	s.Write(r)
}

// define announces p to s before its first record (once per sink: SetSink
// clears defined).
func (p *Probe) define(s writer.Sink) {
	if p.defined.CompareAndSwap(0, 1) {
		s.Define(p.def())
	}
}

// recordFlags are a record's flags and size for a call that ended as f says.
func recordFlags(f callFacts, size int64) (writer.Flags, int64) {
	var flags writer.Flags
	if f&^callRecorded == 0 {
		return 0, 0
	}
	if f&callFailed != 0 {
		flags |= writer.FlagError
	}
	if f&callPanicked != 0 {
		flags |= writer.FlagPanic
	}
	if f&callSized == 0 || !summaries.Load() {
		return flags, 0
	}
	return flags | writer.FlagSize, size
}

// summaries is settings.Runtime.Summaries: whether fine records carry the
// result size. The coarse statistics keep the sizes' spread either way (the
// changeable criterion needs it).
var summaries atomic.Bool

// fineRecords counts records handed to the sink (the budget controller reads
// it); exit adds to it with the call's statistics (stripes.addCall).
var fineRecords = newPcounter()
