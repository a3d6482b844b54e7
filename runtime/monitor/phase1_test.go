package monitor

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestPhase1Timing: a coarse probe whose timed call costs more than the
// budget's share of its function's mean time times one call in the least
// power of two that keeps it within; a fine probe, one a query reads, too few
// calls or no budget leave it alone or time every call.
func TestPhase1Timing(t *testing.T) {
	ps := newProbes(t, "test.example/phase1", 2)
	p := &ps[0]
	window := func(calls, meanNs float64) totals {
		return totals{time: moments{N: calls, Mean: meanNs}}
	}
	for _, c := range []struct {
		w                     totals
		budget, cost, untimed float64
		want                  int
	}{
		{window(1000, 100), 0.02, 25, 0, 16},    // 25/16 ≤ 2
		{window(1000, 10_000), 0.02, 25, 0, 1},  // 25 ≤ 200: every call
		{window(1000, 1), 0.02, 25, 0, -1},      // over even at one in 1024: shed
		{window(1000, 2), 0.02, 25, 0, 1024},    // 25/1024 ≤ 0.04
		{window(10, 100), 0.02, 25, 0, 0},       // too few calls to tell
		{window(1000, 100), 0, 25, 0, 1},        // no budget
		{window(1000, 1250), 0.02, 25, 0, 1},    // exactly the budget
		{window(1000, 1249), 0.02, 25, 0, 2},    // just over it
		{window(1000, 1000), 0.02, 25, 3, 2},    // 12.5 + 1.5 ≤ 20
		{window(1000, 100), 0.02, 25, 3, -1},    // an untimed call alone is over: shed
		{window(1000, 200), 0.02, 25, 3.9, 256}, // 25/256 + 3.9 × 255/256 ≤ 4
	} {
		n, why := phase1Timing(p, c.w, c.budget, c.cost, c.untimed)
		if n != c.want {
			t.Errorf("mean %.0f ns, budget %v, cost %v, untimed %v: one in %d, want %d", c.w.time.Mean, c.budget, c.cost, c.untimed, n, c.want)
		}
		if (n > 1 || n < 0) && !strings.Contains(why, "monitor.coarse-budget") {
			t.Errorf("the reason does not name the setting: %q", why)
		}
		if n < 0 && !strings.HasPrefix(why, "switched off") {
			t.Errorf("a shed probe's reason: %q", why)
		}
	}
	p.mode.Store(modeFine)
	if n, _ := phase1Timing(p, window(1000, 100), 0.02, 25, 3); n != 1 {
		t.Errorf("a fine probe: one in %d, want every call", n)
	}
	p.mode.Store(modeCoarse)
}

// TestShedProbe: a probe phase 1 sheds is off, says so and why in its
// statistics and listing, and comes back when a manual rule chooses its
// mode; a query's floor still raises it.
func TestShedProbe(t *testing.T) {
	ps := newProbes(t, "test.example/shed", 2)
	p := &ps[0]
	shedProbe(p, "switched off: because (monitor.coarse-budget)")
	defer func() {
		phase1.mu.Lock()
		delete(phase1.shed, p)
		phase1.mu.Unlock()
	}()
	if p.On() || ps[1].mode.Load() != modeCoarse {
		t.Fatalf("after shedding, probe on %v, its neighbour %v", p.On(), modeName(ps[1].mode.Load()))
	}
	st := statsFor(t, p.ID())
	if !st.Shed || st.Mode != "off" || !strings.HasPrefix(st.TimingReason, "switched off") {
		t.Errorf("a shed probe's stats: shed %v, mode %s, reason %q", st.Shed, st.Mode, st.TimingReason)
	}
	for _, ls := range Probes(nil) {
		if ls.ID == p.ID() && (!ls.Shed || ls.TimingReason == "") {
			t.Errorf("the listing of a shed probe: %+v", ls)
		}
	}
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/shed.*(..))", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	if !p.On() {
		t.Error("a manual rule that chooses coarse did not bring the shed probe back")
	}
	SetRules(nil)
	if p.On() {
		t.Error("without the rule, the probe is not shed again")
	}
}

// TestTimedOneInEstimates: a coarse probe timing one call in 16 still
// counts every call and every error, as estimates, and times about one in 16.
func TestTimedOneInEstimates(t *testing.T) {
	ps := newProbes(t, "test.example/timedonein", 1)
	p := &ps[0]
	p.timing.Store(15)
	defer p.timing.Store(0)
	boom := errors.New("boom")
	const calls = 64_000
	for i := 0; i < calls; i++ {
		var err error
		if i%4 == 0 {
			err = boom
		}
		c := Start(p)
		DoneErr(&c, err)
	}
	st := statsFor(t, p.ID())
	// Binomial: the timed calls are 4,000 ± 3 × 61.
	if math.Abs(float64(st.Timed)-calls/16) > 3*math.Sqrt(calls/16.0*15/16) {
		t.Errorf("timed %d of %d calls; want about one in 16", st.Timed, calls)
	}
	if st.Count != st.Timed*16 || math.Abs(float64(st.Count)-calls) > 0.1*calls {
		t.Errorf("count %d (%d timed, one in 16); want about %d", st.Count, st.Timed, calls)
	}
	if math.Abs(float64(st.Errors)-calls/4) > 0.15*calls/4 {
		t.Errorf("errors %d; want about %d", st.Errors, calls/4)
	}
	if st.TimedOneIn != 16 {
		t.Errorf("TimedOneIn %d, want 16", st.TimedOneIn)
	}
}

// TestPhase1EarlyLook: a probe that turns hot after phase 1's first looks
// asks for a look at its phase1EarlyCalls-th timed call in a stripe, and
// that look decides its timing (one call in N, or shed) within
// milliseconds rather than at the next scheduled look (up to 10 s away).
func TestPhase1EarlyLook(t *testing.T) {
	ps := newProbes(t, "test.example/early", 1)
	p := &ps[0]
	registry.mu.Lock()
	budget := registry.cfg.CoarseBudget
	registry.cfg.CoarseBudget = 0.02 // the tests' settings have none
	registry.mu.Unlock()
	defer func() {
		registry.mu.Lock()
		registry.cfg.CoarseBudget = budget
		registry.mu.Unlock()
	}()
	startPhase1()
	for phase1.earlyPending.Load() {
		time.Sleep(time.Millisecond) // another probe's look
	}
	x := uint64(1)
	for i := 0; i < 2*phase1EarlyCalls+100; i++ {
		c := Start(p)
		for j := 0; j < 50; j++ {
			x ^= x << 13
			x ^= x >> 7
		}
		DoneErr(&c, nil)
	}
	sinkInt += int(x & 1)
	if !phase1.earlyPending.Load() && p.timing.Load() == 0 && !shedByPhase1(p) {
		t.Fatal("a stripe's timed calls reached phase1EarlyCalls and no look was asked for")
	}
	for deadline := time.Now().Add(5 * time.Second); p.timing.Load() == 0 && !shedByPhase1(p); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no look decided the hot probe's timing")
		}
	}
	phase1.mu.Lock()
	delete(phase1.shed, p)
	phase1.mu.Unlock()
	p.timing.Store(0)
}
