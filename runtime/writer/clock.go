package writer

import (
	"math"
	"os"
	"sync"
	"sync/atomic"
)

// The record clock. Probes stamp every call twice, so the clock read is the
// largest single cost of a monitored call: runtime.nanotime goes through the
// vDSO (on a KVM guest, kvm-clock: a TSC read, a scaling and a stack switch),
// about 26 ns here, while the time-stamp counter itself reads in about 11 ns.
// On amd64 with an invariant TSC the probes read the counter (Ticks) and
// everything that leaves the process is converted to nanoseconds of
// runtime.nanotime's scale: records when the writer encodes them, coarse
// statistics when they are read. Elsewhere, or with TIGRIS_CLOCK=nanotime,
// Ticks is runtime.nanotime and the conversion is the identity.
//
// The rate is calibrated against runtime.nanotime from two anchors, each a
// nanotime reading bracketed by two counter reads (the tightest bracket of a
// few tries): one taken when the package initialises, one taken later. The
// later anchor is renewed whenever the baseline between them has doubled, so
// the rate's error shrinks as the run goes on, and absolute times never jump
// by more than a few anchor errors (tens of ns) when it is renewed. Durations
// (a record's exit minus entry, a statistic) are converted with one rate and
// are exact to the rate's error: about 1e-4 after the first millisecond,
// 1e-6 after a second (docs/trace-format.md, "Clocks").

// ClockSource names the clock whose readings a probe takes (Header.ClockSource).
type ClockSource uint8

const (
	// ClockNanotime: runtime.nanotime (CLOCK_MONOTONIC on Linux); ticks are
	// nanoseconds.
	ClockNanotime ClockSource = 0
	// ClockTSC: the x86 time-stamp counter (RDTSC), invariant, calibrated
	// against runtime.nanotime.
	ClockTSC ClockSource = 1
)

func (c ClockSource) String() string {
	switch c {
	case ClockNanotime:
		return "nanotime"
	case ClockTSC:
		return "tsc"
	}
	return "unknown"
}

// useTSC is decided once at initialisation; the probes branch on it.
var useTSC = chooseTSC(os.Getenv("TIGRIS_CLOCK"))

// chooseTSC says whether Ticks reads the time-stamp counter: only where the
// processor says it is invariant (constant rate, running in every power
// state), the reading is cheaper than runtime.nanotime (a hypervisor may trap
// RDTSC), and TIGRIS_CLOCK does not ask for nanotime.
func chooseTSC(env string) bool {
	if env == "nanotime" || !haveTSC || !invariantTSC() {
		return false
	}
	return cheapestPair(rdtsc) < cheapestPair(nanotime)
}

// cheapestPair is the least time, in nanotime units, that one of a few short
// batches took per pair of f's reads: preemption only makes batches slower.
func cheapestPair(f func() int64) int64 {
	const batches, per = 5, 16
	best := int64(math.MaxInt64)
	var s int64
	for b := 0; b < batches; b++ {
		t0 := nanotime()
		for i := 0; i < per; i++ {
			s += f() - f()
		}
		if d := nanotime() - t0; d < best {
			best = d
		}
	}
	pairSink = s
	return best
}

var pairSink int64

// Ticks reads the record clock. Record.TIn and Record.TOut hold its readings;
// TicksToNanos converts them. With two calls inside it is too costly for the
// inliner; the probes branch on TickSource themselves and call TSC.
func Ticks() int64 {
	if useTSC {
		return rdtsc()
	}
	return nanotime()
}

// TSC reads the time-stamp counter: Ticks when TickSource is ClockTSC, 0 on
// architectures without one.
func TSC() int64 { return rdtsc() }

// TickSource reports the clock Ticks reads.
func TickSource() ClockSource {
	if useTSC {
		return ClockTSC
	}
	return ClockNanotime
}

// anchor is a counter reading and the nanotime reading taken at (about) the
// same instant.
type anchor struct{ tick, ns int64 }

// takeAnchor brackets a nanotime reading with two counter reads, a few times,
// and keeps the tightest bracket: the counter's instant is known to within
// half of it (tens of ns), and a try that was preempted is discarded.
func takeAnchor() anchor {
	if !useTSC {
		n := nanotime()
		return anchor{n, n}
	}
	best, width := anchor{}, int64(math.MaxInt64)
	for i := 0; i < 8; i++ {
		a := rdtsc()
		n := nanotime()
		b := rdtsc()
		if w := b - a; w >= 0 && w < width {
			best, width = anchor{a + w/2, n}, w
		}
	}
	return best
}

// calibration maps ticks to nanoseconds: ns = base.ns + (t − base.tick) × rate.
type calibration struct {
	base   anchor
	latest anchor  // the later anchor the rate was taken from
	rate   float64 // ns per tick
}

func (c *calibration) ns(t int64) int64 {
	if c == nil {
		return t
	}
	return c.base.ns + int64(math.Round(float64(t-c.base.tick)*c.rate))
}

// hz is the counter's rate in ticks per second, rounded.
func (c *calibration) hz() uint64 {
	if c == nil || c.rate <= 0 {
		return 0
	}
	return uint64(math.Round(1e9 / c.rate))
}

var (
	clockBase = takeAnchor()
	calMu     sync.Mutex
	cal       atomic.Pointer[calibration] // nil until first needed, and always under nanotime
)

// firstBaseline is the shortest baseline the first rate is taken over: with
// anchors good to about 20 ns, the rate is good to about 1e-3 (the trace
// format promises 1 %), and it costs a wait only when a record is converted
// within the first 50 µs of the process.
const firstBaseline = 50_000

// currentCal returns the calibration in force, nil when Ticks is nanotime.
func currentCal() *calibration {
	if !useTSC {
		return nil
	}
	if c := cal.Load(); c != nil {
		return c
	}
	return refineClock()
}

// refineClock takes a new later anchor if there is none yet or the baseline
// has doubled since the last one, and returns the calibration in force. It is
// cheap when there is nothing to do (one nanotime read); the writers call it
// once per pass or flush, and statistics readers before they convert.
func refineClock() *calibration {
	if !useTSC {
		return nil
	}
	c := cal.Load()
	if c != nil && nanotime()-c.base.ns < 2*(c.latest.ns-c.base.ns) {
		return c
	}
	calMu.Lock()
	defer calMu.Unlock()
	if c2 := cal.Load(); c2 != c {
		return c2 // another goroutine renewed it meanwhile
	}
	for nanotime()-clockBase.ns < firstBaseline {
	}
	a := takeAnchor()
	if a.tick <= clockBase.tick || a.ns <= clockBase.ns {
		if c != nil {
			return c
		}
		// The counter did not advance with nanotime (it cannot be, with an
		// invariant TSC): 1 ns per tick keeps durations positive.
		a = anchor{clockBase.tick + (a.ns - clockBase.ns), a.ns}
	}
	nc := &calibration{base: clockBase, latest: a,
		rate: float64(a.ns-clockBase.ns) / float64(a.tick-clockBase.tick)}
	cal.Store(nc)
	return nc
}

// TicksToNanos converts a Ticks reading to runtime.nanotime's scale with the
// calibration in force.
func TicksToNanos(t int64) int64 { return currentCal().ns(t) }

// NanosPerTick is the length of a tick in nanoseconds by the calibration in
// force (renewed first if its baseline has doubled): 1 when Ticks is nanotime.
// Coarse statistics collect durations in ticks and scale by it when read.
func NanosPerTick() float64 {
	if c := refineClock(); c != nil {
		return c.rate
	}
	return 1
}

// TickHz is the record clock's rate in ticks per second by the calibration in
// force; 0 when Ticks is nanotime (1e9, exactly, by definition).
func TickHz() uint64 { return currentCal().hz() }
