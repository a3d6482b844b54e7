package monitor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// Phase 1 (every probe coarse, all the time) within a budget. A coarse probe
// reads the clock twice and updates its statistics: some 25 ns a call, which
// on a function that takes 100 ns is a quarter of its time. So a timer looks
// at each coarse probe's calls now and then, and where a timed call costs
// more than monitor.coarse-budget of the function's mean time (2 % by
// default), the probe times one call in N, N the least power of two that
// keeps it within (at most maxTimedOneIn), drawn at random in Start; each
// timed call counts for the N-1 others (stripe.untimed), so counts, error
// counts and rates stay estimates of every call, and the mean and spread of
// the duration are the timed calls'. An untimed call costs the probe's load
// and branch and Start's draw. A probe that a query reads (taps) or that is
// fine times every call. Stats.TimedOneIn and TimingReason show it.
//
// Where even an untimed call (Start's call, draw and count) costs more than
// the budget, on a function of a few nanoseconds, no sampling helps: phase 1
// sheds the probe, switching it off (Stats.Shed, with the reason), unless a
// rule, the analyzer or a query chose its mode. A shed probe stays off until
// the rules change; the calls of its function still count in the time of
// its callers.

// maxTimedOneIn bounds N: a probe still times one call in 1024.
const maxTimedOneIn = 1024

// phase1Looks are when the timer looks first (after 100 ms: a program's hot
// functions are hot from the start, and short-lived programs and benchmarks
// should not pay every call's timing for long), then after a second; then it
// looks every phase1Every.
var phase1Looks, phase1Every = []time.Duration{100 * time.Millisecond, time.Second}, 10 * time.Second

// phase1MinCalls is how many timed calls of a window a decision needs.
const phase1MinCalls = 64

// phase1EarlyCalls timed calls in one of its stripes make a probe ask for a
// look phase1EarlyDelay later (stats.go): a function that turns hot after
// the first looks, in a benchmark of a few hundred milliseconds or a
// program's second phase, pays every call's timing for milliseconds, not
// until the next scheduled look. The delay gathers the probes that turn
// hot together into one look; one look is pending at a time.
const (
	phase1EarlyCalls = 512
	phase1EarlyDelay = 10 * time.Millisecond
)

// phase1 is the looks' state: only a look touches last, cost and untimed
// (under lookMu), only the scheduled timer's function looks.
var phase1 struct {
	once sync.Once
	// lookMu serializes looks: the scheduled timer's and early ones.
	lookMu sync.Mutex
	// early is the timer of an early look, pending while earlyPending.
	early        *time.Timer
	earlyPending atomic.Bool
	started      atomic.Bool // early is set
	last         map[*Probe]totals
	cost         float64 // ns a timed coarse call costs, measured on the first look
	// untimed is what an untimed coarse call costs (measured with cost).
	untimed float64
	mu      sync.Mutex
	why     map[*Probe]string
	shed    map[*Probe]bool // under mu; read by modeOf
	timer   *time.Timer
	looks   int // looks done
}

// startPhase1 starts the timer once, with registry.mu held.
func startPhase1() {
	phase1.once.Do(func() {
		phase1.last = map[*Probe]totals{}
		phase1.why = map[*Probe]string{}
		phase1.shed = map[*Probe]bool{}
		phase1.timer = time.AfterFunc(phase1Looks[0], phase1Tick)
		phase1.early = time.AfterFunc(time.Hour, func() {
			phase1Look()
			phase1.earlyPending.Store(false)
		})
		phase1.early.Stop()
		phase1.started.Store(true)
	})
}

// phase1Soon asks for an early look, unless one is pending or phase 1 has
// not started. It allocates nothing: the early timer is made at start.
func phase1Soon() {
	if phase1.started.Load() && phase1.earlyPending.CompareAndSwap(false, true) {
		phase1.early.Reset(phase1EarlyDelay)
	}
}

// phase1Tick looks, then re-arms the timer.
func phase1Tick() {
	phase1Look()
	phase1.looks++
	next := phase1Every
	if phase1.looks < len(phase1Looks) {
		next = phase1Looks[phase1.looks] - phase1Looks[phase1.looks-1]
	}
	phase1.timer.Reset(next)
}

// phase1Look decides every coarse probe's timing from its calls since the
// last look.
func phase1Look() {
	phase1.lookMu.Lock()
	defer phase1.lookMu.Unlock()
	registry.mu.Lock()
	budget := registry.cfg.CoarseBudget
	probes := append([]*Probe(nil), registry.probes...)
	registry.mu.Unlock()
	if phase1.cost == 0 && budget > 0 {
		phase1.cost = measureCoarseCost(0)
		phase1.untimed = measureCoarseCost(maxTimedOneIn - 1)
	}
	for _, p := range probes {
		if p.stats.Load() == &noStats || shedByPhase1(p) {
			continue // no calls to look at
		}
		t := p.totals()
		w := t.minus(phase1.last[p])
		phase1.last[p] = t
		n, why := phase1Timing(p, w, budget, phase1.cost, phase1.untimed)
		if n == 0 {
			continue // too few calls to tell: as it was
		}
		if n < 0 {
			shedProbe(p, why)
			continue
		}
		phase1.mu.Lock()
		phase1.why[p] = why
		phase1.mu.Unlock()
		p.timing.Store(uint32(n - 1))
	}
}

// phase1Timing returns N for a probe whose calls of the last window are w
// (0: no decision; -1: shed it) and why, in words a person reads. A call
// costs the probe untimedNs, and costNs once in N.
func phase1Timing(p *Probe, w totals, budget, costNs, untimedNs float64) (int, string) {
	if budget <= 0 || p.mode.Load() != modeCoarse || p.taps.Load() != nil {
		return 1, ""
	}
	if w.time.N < phase1MinCalls {
		return 0, ""
	}
	mean := w.time.Mean
	over := func(n int) bool {
		per := costNs / float64(n)
		if n > 1 {
			per += untimedNs * (1 - 1/float64(n))
		}
		return per > budget*mean
	}
	n := 1
	for n < maxTimedOneIn && over(n) {
		n *= 2
	}
	of := ", more than " + settings.HumanPercent(budget) + " (monitor.coarse-budget) of the function's " + settings.HumanNs(mean) + " a call"
	switch {
	case n == 1:
		return 1, ""
	case over(n):
		return -1, "switched off: a call costs the probe about " + settings.HumanNs(untimedNs) + " even untimed" + of
	}
	return n, "a timed call costs about " + settings.HumanNs(costNs) + of
}

// shedProbe switches a registered probe off for phase 1, for the reason
// why, unless a rule, the analyzer or a query chose its mode (modeOf).
func shedProbe(p *Probe, why string) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	phase1.mu.Lock()
	if phase1.shed == nil {
		phase1.why, phase1.shed = map[*Probe]string{}, map[*Probe]bool{}
	}
	phase1.shed[p], phase1.why[p] = true, why
	phase1.mu.Unlock()
	p.mode.Store(modeOf(int(p.id) - 1))
}

// phase1Sheds reports whether phase 1 has shed any probe.
func phase1Sheds() bool {
	phase1.mu.Lock()
	defer phase1.mu.Unlock()
	return len(phase1.shed) > 0
}

// shedByPhase1 reports whether phase 1 shed the probe.
func shedByPhase1(p *Probe) bool {
	phase1.mu.Lock()
	defer phase1.mu.Unlock()
	return phase1.shed[p]
}

// timingReason says why the probe times one call in N, "" when it times
// every call.
func (p *Probe) timingReason() string {
	phase1.mu.Lock()
	defer phase1.mu.Unlock()
	if p.timing.Load() == 0 && !phase1.shed[p] {
		return ""
	}
	return phase1.why[p]
}

// measureCoarseCost times coarse calls of a private probe whose timing is
// timing (0: every call timed): what a call costs phase 1 beyond an off
// probe, on this machine, the best of a few rounds (a busy machine only
// makes it look dearer). Short rounds: the first look often comes while a
// program starts, and the best of 8 rounds of 128 calls (some 60 µs for
// both timings) varied less between runs than the best of 3 of 2,000 (some
// 500 µs).
func measureCoarseCost(timing uint32) float64 {
	p := newPrivateProbe(&ProbeInfo{})
	p.mode.Store(modeCoarse)
	p.timing.Store(timing)
	const calls, rounds = 128, 8
	best := 0.0
	for round := 0; round < rounds; round++ {
		t0 := nanotime()
		for i := 0; i < calls; i++ {
			c := Start(p)
			c.exit(false, 0, false)
		}
		if d := float64(nanotime()-t0) / calls; best == 0 || d < best {
			best = d
		}
	}
	return best
}
