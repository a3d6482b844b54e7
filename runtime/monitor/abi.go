package monitor

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// The probe ABI: everything the code tigris generates calls, and nothing else.
//
// For each instrumented package the rewriter adds a probe table, its
// descriptions encoded in one string constant (table.go)
//
//	var __tigris_p [N]__tigris.Probe
//	var _ = __tigris_register() // a func init would rename the package's own (init.0 → init.1)
//	func __tigris_register() bool {
//		__tigris.RegisterTable(__tigris_p[:], "tgt1...",
//			__tigris.Links{AtExit: __tigris_atexit.Add, Admin: __tigris_admin.Start})
//		return true
//	}
//
// and, in each matched function, one of two prologues, right after the
// opening brace and on the same line; every edit stays on its line.
//
// A function without a defer statement of its own gets a probe without a
// defer. Each return statement becomes an assignment of the returned values
// to its results (named by the rewriter where they had no names: __tgrN),
// the test and the call that end a started call, and a bare return:
//
//	var __tgc *__tigris.Call; if __tigris_p[3].On() { __tg := __tigris.Start(&__tigris_p[3]); __tgc = &__tg };
//		...
//		{ __tgr0, err = v, nil; if __tgc != nil { __tgc.End(err != nil, int64(__tgr0), true) }; return }
//
// (End's size is len of a string, slice, map or channel result, an integer
// result's value, or none: `__tgc.End(false, 0, false)`; a function
// without results also ends the call at its closing brace; Done, DoneErr,
// DoneString, ... are the same test and call as functions, which inline).
// With the probe off, the function runs its own code plus a load and
// a branch at entry and a test of __tgc at each return: no defer
// bookkeeping, and its results stay in registers (a function with any defer
// statement keeps its results in its frame). A panic passing through such a
// function is not measured: its call never ends (the trace context goes back
// to the depth of the next exit of an enclosing call).
//
// A function with defer statements of its own (and every probed function
// under monitor.panics: all, or one that never returns) defers its exit:
//
//	if __tigris_p[3].On() { __tg := __tigris.Start(&__tigris_p[3]); defer __tg.Exit(nil) };
//
// For a function with an error result the deferred call is
// `__tg.ExitErr(&err)`, and for one whose first result has a cheap size
// `__tigris.ExitSlice(&__tg, &err, &r0)` (ExitString, ExitMap, ExitChan,
// ExitInt): the exit reads the results through the pointers when the
// function returns, after the function's own deferred calls, and sees
// panics. Its returns become an assignment of the results and a goto to a
// label before the closing brace, where the only return is: the compiler
// refuses open-coded defers to more than 15 returns times defers. No closure is deferred,
// so the user's own function literals keep their names (f.func1, ...) in
// tracebacks and profiles. The contract:
//
//   - Probe.On inlines to one atomic load; when the probe is off nothing
//     else runs, and the Call is not even declared (so not zeroed: that is
//     why the prologue asks the probe first rather than testing a Call that
//     Enter returns). Start, Enter, End, the exits and the Dones never
//     allocate, block or panic; the Dones inline to a test of their Call.
//   - A call-site probe (rewriter/callsite.go) needs its Call before the
//     call and its exit after it, in one statement list:
//     `__tgc3 := __tigris.Enter(&__tigris_p[7]); ...; if __tgc3.On() {
//     __tgc3.Exit(err) }`. Enter is Start behind the same check, returning
//     the zero Call when the probe is off.
//   - The Call lives in the instrumented function's frame; the exits must be
//     called (deferred) with a pointer to it, or End (a Done) with it at the
//     function's return, once per Start (or Enter whose Call is On). A
//     second call is harmless. They tell a panicking exit from a normal one
//     by where the unwinding panic started relative to the Call (gslots.go:
//     panicking), so the Call must not be copied elsewhere.
//   - RegisterTable runs from package initialization, before any probe of
//     the package can fire; probes stay off until it has run.
//   - A go statement of an instrumented function calls Fork and, inside a fine
//     trace, starts its goroutine through a generated wrapper that calls
//     Link.Adopt first (link.go).
//   - A function with a context.Context or *http.Request parameter asks,
//     right after Start, whether its call is a trace root that looks for a
//     remote parent, and hands it the parameter (join.go):
//     `__tg := __tigris.Start(&__tigris_p[3]); if __tg.Joins() {
//     __tigris.JoinContext(&__tg, ctx) }` (for a request r: `if __tg.Joins()
//     && r != nil { __tigris.JoinRequest(&__tg, r.Context(), r.Header) }`).
//     Joins inlines to a test of a bit of the Call.
//
// CodeVersion names this contract. A tigris binary refuses to instrument
// against a monitor whose CodeVersion differs from the one it generates code
// for (rewriter/version.go), and says which versions met, instead of failing
// with compile or link errors in generated code. Increment it with every
// incompatible change to anything in this file.
const CodeVersion = 9

// Mode values as stored in Probe.mode; the prologue only compares with modeOff.
const (
	modeOff    uint32 = 0
	modeCoarse uint32 = 1
	modeFine   uint32 = 2
)

// Probe is the switch and the statistics of one instrumented function. Generated
// code declares probes in a package-level array and passes pointers to Enter; a
// Probe must not be copied after registration.
type Probe struct {
	mode atomic.Uint32 // the only word the prologue reads
	id   uint32        // unique in the binary, assigned at registration
	// descs are the descriptions of the probes registered with this one,
	// decoded at the first use of any of them (info).
	descs *descs
	// stats are the probe's statistics: noStats, which holds no stripes,
	// until the probe counts its first call, which gives it its own
	// (ownStats), so a probe that is never called costs no memory.
	stats atomic.Pointer[stripes]
	// defined is set once the probe's definition went to the current sink.
	defined atomic.Uint32
	// taps are the queries that read the probe's calls (query.go); nil
	// almost always.
	taps atomic.Pointer[[]probeTap]
	// timing is phase 1's sampling of a coarse probe (phase1.go): 0 times
	// every call; N-1 (N a power of two) times one call in N, drawn at
	// random, each timed call counting for the N-1 others.
	timing atomic.Uint32
}

// ID returns the probe's id, unique within the binary (0 before registration).
func (p *Probe) ID() uint32 { return p.id }

// ProbeInfo is the static metadata the rewriter emits for each probe.
type ProbeInfo struct {
	Package string
	Recv    string // receiver base type; "" for a function
	RecvPtr bool
	Name    string
	Params  []string
	Results []string
	File    string
	Line    int
	Flags   uint32 // pointcut.Flags
	// Static metrics computed at build time.
	Cyclomatic int
	Statements int
}

// Links are the parts a tigris-built binary links beside the monitor. The
// generated probe table names each one, so what a binary carries can be read
// in its generated code rather than inferred from init side effects.
type Links struct {
	// AtExit registers f to run when the program exits (main returns or
	// os.Exit is called), so the writer is flushed; package
	// github.com/tigrisgo/tigris/runtime/monitor/atexit provides it. nil:
	// records still buffered at exit are lost.
	AtExit func(f func())
	// Analyzer starts the two-phase analysis schedule, called once at the
	// first registration; it runs on timers and keeps no goroutine waiting.
	// Package github.com/tigrisgo/tigris/runtime/monitor/analyzer provides it
	// (Run). nil: no analysis.
	Analyzer func()
	// Admin starts the admin endpoint when the settings ask for one; package
	// github.com/tigrisgo/tigris/runtime/monitor/admin provides it (linked only
	// when tigris.yaml says admin.link). nil: a listen address is reported
	// and ignored.
	Admin func(settings.Admin) error
}

// RegisterPackage adds a package's probes with the settings the linker
// embedded in the binary. Generated code calls it from init; see Register for
// probes registered by hand.
func RegisterPackage(probes []Probe, infos []ProbeInfo, links Links) {
	register("", probes, givenDescs(probes, infos), links)
}

// RegisterTable is RegisterPackage for descriptions in a table EncodeTable
// wrote: what generated code calls from init. A malformed table is reported
// and the package's probes stay off.
//
// Registration does not decode the table: it checks the format's mark and
// keeps the string, and the descriptions are decoded at the first use of any
// of them (the rules' patterns, ctl, the admin endpoint, the writer's probe
// definitions, the analyzer), so start-up costs the same whatever the
// number of probes. A table that fails to decode then is reported and its
// probes are switched off.
func RegisterTable(probes []Probe, table string, links Links) {
	if len(table) < len(tableMagic) || table[:len(tableMagic)] != tableMagic {
		defer recoverInternal("register")
		report(fmt.Errorf("register: %w: not format %s; probes stay off", errTable, tableMagic))
		return
	}
	register("", probes, &descs{table: table, probes: probes}, links)
}

// Call is the state of one probed call between Start and Exit. It is a value kept
// on the instrumented function's stack; the zero Call (probe off) does nothing.
// The off path never declares one (see the prologue above), so its size costs
// only calls that are measured.
type Call struct {
	p  *Probe
	t0 int64
	// fine packs the trace position taken at entry (fine mode only): flagFine,
	// flagSampled, the stack depth (ess) and the order index (eoi). The trace id and
	// goroutine are read from the goroutine's context at exit: they cannot change
	// while the call runs.
	fine uint64
	// ctx is the goroutine's trace context, found at entry (fine mode only):
	// the exit runs on the same goroutine, and a second lookup would cost a
	// few ns of every fine call.
	ctx *traceCtx
}

const (
	flagFine    = 1 << 63 // the call took the trace context
	flagSampled = 1 << 62 // and is recorded
	// flagExited marks a call whose exit ran: a second exit returns at once.
	// A flag rather than clearing p: storing a nil pointer into a Call,
	// which the compiler cannot tell is on the stack, costs a write-barrier
	// check.
	flagExited = 1 << 61
	// flagJoin marks the root of a trace that looks for its remote parent
	// (join.go): a recorded root, or under monitor.follow-parent any root
	// that drew its decision.
	flagJoin = 1 << 60
	essShift = 32
	essMask  = 1<<28 - 1 // bits 32-59
	eoiMask  = 1<<32 - 1
)

func (c *Call) ess() uint32 { return uint32(c.fine>>essShift) & essMask }
func (c *Call) eoi() uint32 { return uint32(c.fine & eoiMask) }

// On reports whether the probe is switched on, i.e. whether the function's
// call must be started and its exit deferred. It is all the prologue runs
// when the probe is off and must stay small enough to inline
// (TestEnterInlines checks it).
func (p *Probe) On() bool { return p.mode.Load() != modeOff }

// Start starts a probed call of a probe that is on (a probe switched off
// since On asked is measured coarse this once). go:norace: it touches the
// trace context (see traceCtx).
//
//go:noinline
//go:norace
func Start(p *Probe) Call {
	c := Call{p: p}
	if p.mode.Load() == modeFine {
		// The trace context: order index and depth, and at a trace root
		// whether this trace is sampled. Sampling is per trace, so a
		// recorded trace is complete; a long-lived trace is sampled in
		// pieces (sampling.go). Written out here, as the exit is. The clock
		// is read first, with g in the same call (one call fewer than
		// reading them apart, about 1 ns); the few ns of bookkeeping after
		// it count in the call's time, and a slow lookup of the context
		// (its first use, or the portable slots) is not counted.
		var gp unsafe.Pointer
		if useTSC {
			c.t0, gp = ticksAndG()
		} else {
			c.t0, gp = nanotime(), getg()
		}
		ctx := knownContext(gp)
		if ctx == nil {
			ctx = newContext(gp)
			c.t0 = ticksNow()
		}
		c.ctx = ctx
		if ctx.ess == 0 {
			ctx.trace = ctx.newTrace()
			ctx.eoi = 0
			// Draws, or takes an adopted link (link.go). A root that
			// drew may follow its remote parent's decision (join.go).
			if drew := ctx.startRoot(); ctx.sampled || drew && followParent.Load() {
				c.fine = flagJoin
			}
		} else {
			ctx.sampleCall()
		}
		d := ctx.ess
		c.fine |= flagFine | uint64(d&essMask)<<essShift
		// An unsampled call still counts in the depth, so its callees are not roots.
		if ctx.sampled {
			c.fine |= flagSampled | uint64(ctx.eoi)
			ctx.eoi++
		}
		// Noted as open until the depth goes back below it (open.go), then
		// the depth, after the note.
		ctx.noteOpen(c.t0, uint64(p.id)<<32|uint64(c.eoi()), d, ctx.sampled)
		setOwn32(&ctx.ess, d+1)
		return c
	}
	if m := p.timing.Load(); m != 0 && p.taps.Load() == nil {
		// Phase 1 times one call in m+1: the others return the zero Call,
		// which every exit ignores; a timed call carries the count of
		// those it stands for in fine, unused by coarse calls.
		if cheaprand()&m != 0 {
			return Call{}
		}
		c.fine = uint64(m)
	}
	if useTSC { // ticks (clock.go)
		c.t0 = writer.TSC()
	} else {
		c.t0 = nanotime()
	}
	return c
}

// Enter starts a probed call if the probe is on and returns the zero Call
// otherwise: the call-site probes' form. It inlines to one atomic load and a
// branch when the probe is off.
func Enter(p *Probe) Call {
	if p.mode.Load() == modeOff {
		return Call{}
	}
	return Start(p)
}

// On reports whether the call is being measured, i.e. whether Exit must be called.
func (c *Call) On() bool { return c.p != nil }

// Exit ends a probed call; err is the function's error result (nil when it has
// none). It is deferred by the prologue, so it also runs when the function panics.
func (c *Call) Exit(err error) {
	c.End(err != nil, 0, false)
}

// ExitSize is Exit for functions whose first non-error result has a cheap size
// (len of a string, slice or map; an integer's value): the size feeds the
// changeability estimate (spread of result sizes).
func (c *Call) ExitSize(err error, size int64) {
	c.End(err != nil, size, true)
}

// ExitErr is Exit for a function whose error result is *err when it returns.
func (c *Call) ExitErr(err *error) {
	c.End(*err != nil, 0, false)
}

// failed reports whether an optional error result is set.
func failed(err *error) bool { return err != nil && *err != nil }

// ExitString ends a call whose first result, *r, is a string (err, when not
// nil, points to its error result); the size is its length.
func ExitString[T ~string](c *Call, err *error, r *T) { c.End(failed(err), int64(len(*r)), true) }

// ExitSlice is ExitString for a slice result.
func ExitSlice[T ~[]E, E any](c *Call, err *error, r *T) { c.End(failed(err), int64(len(*r)), true) }

// ExitMap is ExitString for a map result.
func ExitMap[T ~map[K]V, K comparable, V any](c *Call, err *error, r *T) {
	c.End(failed(err), int64(len(*r)), true)
}

// ExitChan is ExitString for a channel result that can be received from
// (chan E or <-chan E; a send-only channel has no size for tigris).
func ExitChan[T ~chan E | ~<-chan E, E any](c *Call, err *error, r *T) {
	c.End(failed(err), int64(len(*r)), true)
}

// ExitInt is ExitString for an integer result: the size is its value.
func ExitInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr](c *Call, err *error, r *T) {
	c.End(failed(err), int64(*r), true)
}

// Floor is what a probe compiled under monitor.floor: true calls when it is
// on, and all it does: a cold call behind the probe's load and branch, the
// least any switchable probe can cost, against which benchmarks measure a
// real probe's off path. It measures nothing.
//
//go:noinline
func Floor(p *Probe) {}

// Each return of a function whose probe has no deferred exit (the first
// form of the contract above) calls one of these with the Call the prologue
// started, nil when the probe was off, and the values it returns. Each inlines to a test of c and a call of the
// exit that only a started call makes (TestEnterInlines).

// Done ends a started call, c, of a function without an error result or a
// sized first result; nil c does nothing.
func Done(c *Call) {
	if c != nil {
		c.End(false, 0, false)
	}
}

// DoneErr is Done for a function returning err as its error result.
func DoneErr(c *Call, err error) {
	if c != nil {
		c.End(err != nil, 0, false)
	}
}

// DoneString is Done for a function whose first result, r, is a string (err
// is its error result, nil when it has none); the size is its length.
func DoneString[T ~string](c *Call, err error, r T) {
	if c != nil {
		c.End(err != nil, int64(len(r)), true)
	}
}

// DoneSlice is DoneString for a slice result.
func DoneSlice[T ~[]E, E any](c *Call, err error, r T) {
	if c != nil {
		c.End(err != nil, int64(len(r)), true)
	}
}

// DoneMap is DoneString for a map result.
func DoneMap[T ~map[K]V, K comparable, V any](c *Call, err error, r T) {
	if c != nil {
		c.End(err != nil, int64(len(r)), true)
	}
}

// DoneChan is DoneString for a channel result that can be received from.
func DoneChan[T ~chan E | ~<-chan E, E any](c *Call, err error, r T) {
	if c != nil {
		c.End(err != nil, int64(len(r)), true)
	}
}

// DoneInt is DoneString for an integer result: the size is its value.
func DoneInt[T ~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr](c *Call, err error, r T) {
	if c != nil {
		c.End(err != nil, int64(r), true)
	}
}

// exit is End, for the exits.
func (c *Call) exit(failed bool, size int64, hasSize bool) { c.End(failed, size, hasSize) }

// End ends a call c started, at a return of a function without a deferred
// exit, when c is not nil: failed tells whether its error result is set,
// size is its first result's size when hasSize. The generated return calls
// it behind its own test of the Call, `if __tgc != nil { __tgc.End(err !=
// nil, int64(len(r0)), true) }`, which is what a Done inlines to, without an
// inlined call at every return for the compiler to build. The exits and
// the Dones call it too. go:norace: it touches the trace context (see
// traceCtx).
//
//go:norace
func (c *Call) End(failed bool, size int64, hasSize bool) {
	p := c.p
	if p == nil || c.fine&flagExited != 0 {
		return
	}
	var t1 int64
	var gp unsafe.Pointer
	if useTSC { // ticks (clock.go)
		t1, gp = ticksAndG()
	} else {
		t1, gp = nanotime(), getg()
	}
	c.fine |= flagExited // a second Exit of the same call is harmless
	var f callFacts
	if failed {
		f |= callFailed
	}
	if panickingOn(gp, c) {
		f |= callPanicked
	}
	if hasSize {
		f |= callSized
	}
	if c.fine&flagFine == 0 {
		p.addCall(t1-c.t0, f, size, c.fine&eoiMask)
		if p.taps.Load() != nil {
			p.tap(c.t0, t1, f, gp, nil, 0)
		}
		return
	}
	// A fine call: the trace context goes back to the call's depth, the call
	// counts in the statistics, and a sampled call's record goes to the
	// sink. Where the sink is the asynchronous writer the record's fields go
	// straight into its queue, under the same pin as the statistics: one
	// procPin and no copy of the record. Async.Reserve, inlined, gives the
	// slot below the queue's wake mark (no call, no arguments to pass);
	// from the mark on Async.Append decides the wake and a full queue. The
	// null writer counts the record under the same pin. Otherwise (another
	// sink, or the queue full, when the writer's OnFull policy decides) it
	// goes through Sink.Write.
	// Written out here rather than in a function of its own: every call on
	// this path costs the spilling of the live registers.
	ctx := c.ctx
	d := c.ess()
	setOwn32(&ctx.ess, d) // back to the depth at entry, even if inner calls never exited
	// A root's exit ends its trace, and the next entry starts the pieces
	// anew (startPieces): nothing to keep for it.
	if d != 0 && !ctx.pieces.quiet(d, t1) {
		ctx.exited(t1)
	}
	var b *sinkBox
	if c.fine&flagSampled != 0 {
		if b = sink.Load(); b != nil && b.s != nil {
			f |= callRecorded
			if p.defined.Load() == 0 {
				p.define(b.s)
			}
		} else if b != nil && b.closing != nil {
			c.endClosing(b.closing, ctx, p, t1, f, size, d, gp) // the writer is closing (open.go)
			return
		}
	}
	written, wake := false, false
	ss := p.stats.Load()
	if pid := procPin(); pid < len(ss.per) {
		st := &ss.per[pid].stripe
		st.addTime(t1 - c.t0) // stripe.add, written out
		st.addFacts(f, size)
		if f&callRecorded != 0 {
			fineRecords.addPinned(pid)
			if a := b.async; a != nil {
				flags, rsize := recordFlags(f, size)
				if sl, ok := a.Reserve(pid); ok {
					r := sl.R
					r.Probe, r.Flags, r.EOI, r.ESS = p.id, flags, c.eoi(), d
					r.Trace, r.GID, r.TIn, r.TOut, r.Size = ctx.trace, ctx.goid, c.t0, t1, rsize
					sl.Commit()
					written = true
				} else {
					written, wake = a.Append(pid, p.id, flags, c.eoi(), d, ctx.trace, ctx.goid, c.t0, t1, rsize)
				}
			} else if n := b.null; n != nil {
				n.WritePinned(pid)
				written = true
			}
		}
		procUnpin()
	} else {
		procUnpin()
		p.addCall(t1-c.t0, f, size, 0)
	}
	if wake {
		b.async.Wake()
	}
	if p.taps.Load() != nil {
		p.tap(c.t0, t1, f, gp, ctx, d)
	}
	if f&callRecorded == 0 {
		return
	}
	if !written {
		c.record(b.s, ctx, p, t1, f, size)
	}
	if f&callPanicked != 0 && d == 0 {
		flushOnPanic()
	}
}

// def is the writer's view of a probe.
func (p *Probe) def() writer.ProbeDef {
	in := p.info()
	return writer.ProbeDef{
		ID: p.id, Signature: in.Signature(), Package: in.Package,
		Recv: in.Recv, Name: in.Name, File: in.File, Line: in.Line,
	}
}
