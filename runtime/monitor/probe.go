package monitor

import (
	"sync/atomic"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Mode values as stored in Probe.mode; the prologue only compares with modeOff.
const (
	modeOff    uint32 = 0
	modeCoarse uint32 = 1
	modeFine   uint32 = 2
)

// Probe is the switch and the statistics of one instrumented function. Generated
// code declares probes in a package-level array and passes pointers to Enter; a
// Probe must not be copied after Register.
type Probe struct {
	mode  atomic.Uint32 // the only word the prologue reads
	id    uint32        // unique in the binary, assigned by Register
	info  *ProbeInfo
	stats *stripes // allocated at Register
	// defined is set once the probe's definition went to the current sink.
	defined atomic.Uint32
}

// ID returns the probe's id, unique within the binary (0 before Register).
func (p *Probe) ID() uint32 { return p.id }

// Call is the state of one probed call between Enter and Exit. It is a value kept
// on the caller's stack; the zero Call (probe off) does nothing. It is four words:
// the off path returns a zeroed Call, and every word more costs the off path
// measurably (a 7-word Call made it 5 ns instead of under 1).
type Call struct {
	p    *Probe
	t0   int64
	mark uintptr // the goroutine's innermost panic at entry, to tell a panic exit
	// fine packs the trace position taken at entry (fine mode only): flagFine,
	// flagSampled, the stack depth (ess) and the order index (eoi). The trace id and
	// goroutine are read from the goroutine's context at exit: they cannot change
	// while the call runs.
	fine uint64
}

const (
	flagFine    = 1 << 63 // the call took the trace context
	flagSampled = 1 << 62 // and is recorded
	essShift    = 32
	essMask     = 1<<30 - 1
	eoiMask     = 1<<32 - 1
)

func (c *Call) ess() uint32 { return uint32(c.fine>>essShift) & essMask }
func (c *Call) eoi() uint32 { return uint32(c.fine & eoiMask) }

// Enter starts a probed call. It is the prologue's only call when the probe is
// off and must stay small enough to inline (TestEnterInlines checks it).
func Enter(p *Probe) Call {
	if p.mode.Load() == modeOff {
		return Call{}
	}
	return enter(p)
}

// On reports whether the call is being measured, i.e. whether Exit must be deferred.
func (c *Call) On() bool { return c.p != nil }

//go:noinline
func enter(p *Probe) Call {
	c := Call{p: p, mark: panicMark()}
	if p.mode.Load() == modeFine {
		c.enterFine()
	}
	c.t0 = nanotime()
	return c
}

// Exit ends a probed call; err is the function's error result (nil when it has
// none). It is deferred by the prologue, so it also runs when the function panics.
func (c *Call) Exit(err error) {
	c.exit(err != nil, 0, false)
}

// ExitSize is Exit for functions whose first non-error result has a cheap size
// (len of a string, slice or map; an integer's value): the size feeds the
// changeability estimate (spread of result sizes).
func (c *Call) ExitSize(err error, size int64) {
	c.exit(err != nil, size, true)
}

func (c *Call) exit(failed bool, size int64, hasSize bool) {
	p := c.p
	if p == nil {
		return
	}
	t1 := nanotime()
	c.p = nil // a second Exit of the same call is harmless
	panicked := panicMark() != c.mark
	d := t1 - c.t0
	p.stats.add(d, failed, panicked, size, hasSize)
	if c.fine != 0 {
		c.exitFine(p, t1, failed, panicked, size, hasSize)
	}
}

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

// probeDef is the writer's view of a probe.
func (p *Probe) def() writer.ProbeDef {
	in := p.info
	return writer.ProbeDef{
		ID: p.id, Signature: in.Signature(), Package: in.Package,
		Recv: in.Recv, Name: in.Name, File: in.File, Line: in.Line,
	}
}

// keep unsafe imported for the slot accessors in gls files.
var _ unsafe.Pointer
