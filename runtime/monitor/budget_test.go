package monitor

import (
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"math"
	"testing"
	"time"
)

func TestAnalyzerBudgetLowersSampling(t *testing.T) {
	const pkg = "test.example/budget"
	ps := newProbes(t, pkg, 5)
	a := manual("most frequent")
	a.Budget = 0.02
	useAnalysis(t, a)
	an.mu.Lock()
	saved := an.cost
	// A record that costs a second: any fine call rate breaks a 2 % budget.
	an.cost = &FineCost{CallNs: 0, RecordNs: 1e9, Sink: "fake"}
	an.mu.Unlock()
	defer func() { an.mu.Lock(); an.cost = saved; an.mu.Unlock() }()
	defer SetSampling(1)

	analyze(t)
	for i, n := range []int{200, 100, 50, 12, 2} {
		callN(&ps[i], n)
	}
	c := analyze(t)
	if c.Budget == nil {
		t.Fatal("cycle with a budget has no budget decision")
	}
	if c.Budget.FineCallsPerSec <= 0 || c.Sampling >= 1 || c.Sampling < minSampling {
		t.Errorf("budget decision %+v, sampling %v; want a lowered rate", *c.Budget, c.Sampling)
	}
	if Sampling() != 1 || EffectiveSampling() != c.Sampling {
		t.Errorf("Sampling() = %v, EffectiveSampling() = %v; want the configured 1 and the cycle's %v", Sampling(), EffectiveSampling(), c.Sampling)
	}
	// The budget is a ceiling on the configured rate, not a replacement for it.
	if err := SetSampling(0.5); err != nil {
		t.Fatal(err)
	}
	if EffectiveSampling() != num.Min(0.5, c.Sampling) {
		t.Errorf("after SetSampling(0.5): effective %v, want %v", EffectiveSampling(), num.Min(0.5, c.Sampling))
	}
	b := a
	b.Budget = 0
	if err := SetAnalysis(b); err != nil {
		t.Fatal(err)
	}
	if EffectiveSampling() != 0.5 {
		t.Errorf("budget off: effective sampling %v, want the configured 0.5", EffectiveSampling())
	}
}

func TestDecideSampling(t *testing.T) {
	cost := FineCost{CallNs: 10, RecordNs: 1000}
	for _, tc := range []struct {
		name       string
		in         budgetInput
		rate       float64
		action     string
		withinBudg bool
	}{
		// 1 CPU, 2 %: 2e7 ns/s. 1e5 calls/s pay 1e6 ns/s fixed; 1.9e7 ns/s left for
		// 1e8 ns/s of records at rate 1: rate 0.19.
		{"lower", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 1e5, configured: 1, previous: 1}, 0.19, "lowered", true},
		{"more procs", budgetInput{budget: 0.02, cost: cost, procs: 2, callsPerSec: 1e5, configured: 1, previous: 1}, 0.39, "lowered", true},
		{"never above configured", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 10, configured: 0.3, previous: 0.3}, 0.3, "kept", true},
		{"raise at most twofold", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 10, configured: 1, previous: 0.1}, 0.2, "raised", true},
		{"idle goes up gradually", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 0, configured: 1, previous: 0.4}, 0.8, "raised", true},
		{"floor", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 1e7, configured: 1, previous: 0.5}, minSampling, "floor", false},
		{"fixed cost alone too much", budgetInput{budget: 0.02, cost: FineCost{CallNs: 1e4, RecordNs: 1}, procs: 1, callsPerSec: 1e4, configured: 1, previous: 1}, minSampling, "floor", false},
		{"configured below floor", budgetInput{budget: 0.02, cost: cost, procs: 1, callsPerSec: 1e7, configured: 0.0001, previous: 0.0001}, 0.0001, "floor", false},
	} {
		b := decideSampling(tc.in)
		if math.Abs(b.Rate-tc.rate) > 1e-9 || b.Action != tc.action {
			t.Errorf("%s: rate %v action %q; want %v %q", tc.name, b.Rate, b.Action, tc.rate, tc.action)
		}
		if tc.withinBudg && b.Share > tc.in.budget*(1+1e-9) {
			t.Errorf("%s: predicted share %v exceeds the budget %v", tc.name, b.Share, tc.in.budget)
		}
		if b.Rate > tc.in.configured {
			t.Errorf("%s: rate %v above the configured %v", tc.name, b.Rate, tc.in.configured)
		}
	}
}

func TestCalibrateIsPrivate(t *testing.T) {
	newProbes(t, "test.example/calibrate", 1)
	sink := &recordSink{}
	prev := SetSink(sink)
	defer SetSink(prev)
	before, probes := fineRecords.Load(), len(Snapshot())
	c := calibrate()
	if !(c.CallNs >= 0 && c.RecordNs >= 1) || math.IsInf(c.CallNs+c.RecordNs, 0) || math.IsNaN(c.CallNs+c.RecordNs) {
		t.Errorf("calibration %+v: want finite costs, RecordNs ≥ 1", c)
	}
	if c.Sink != "sync" && c.Sink != "null" {
		t.Errorf("calibration sink %q", c.Sink)
	}
	if len(sink.records)+len(sink.defs) != 0 || fineRecords.Load() != before || len(Snapshot()) != probes {
		t.Errorf("calibration reached the program: %d records, %d definitions, %d counted, %d → %d probes",
			len(sink.records), len(sink.defs), fineRecords.Load()-before, probes, len(Snapshot()))
	}
	t.Logf("fine call +%.0f ns, record +%.0f ns (%s sink), calibration took %v", c.CallNs, c.RecordNs, c.Sink, time.Duration(c.TookNs))
}

// TestBudgetRaisesGradually runs cycles through the analyzer: a burst makes the
// controller lower the rate, then quiet windows let it come back, at most twice
// the previous cycle's rate per cycle. Each decision's Previous is the rate the
// cycle before chose, not the configured rate.
func TestBudgetRaisesGradually(t *testing.T) {
	const pkg = "test.example/budgetramp"
	ps := newProbes(t, pkg, 5)
	a := manual("most frequent")
	a.Budget = 0.02
	useAnalysis(t, a)
	an.mu.Lock()
	saved := an.cost
	an.cost = &FineCost{CallNs: 0, RecordNs: 1e9, Sink: "fake"} // any burst breaks the budget
	an.mu.Unlock()
	defer func() { an.mu.Lock(); an.cost = saved; an.mu.Unlock() }()
	defer SetSampling(1)

	analyze(t)
	for i, n := range []int{2000, 100, 50, 12, 2} {
		callN(&ps[i], n)
	}
	burst := analyze(t)
	if burst.Budget == nil || burst.Budget.Action != "lowered" && burst.Budget.Action != "floor" || burst.Sampling > 0.25 {
		t.Fatalf("burst cycle: sampling %v, decision %+v; want a rate lowered below 25%%", burst.Sampling, burst.Budget)
	}
	prev := burst
	for i := 0; i < 20 && prev.Sampling < 1; i++ {
		c := analyze(t) // a quiet window: nothing runs
		b := c.Budget
		if b == nil {
			t.Fatalf("cycle %d: no budget decision", c.Seq)
		}
		if b.Previous != prev.Sampling {
			t.Errorf("cycle %d: previous rate %v; want the last cycle's %v", c.Seq, b.Previous, prev.Sampling)
		}
		if want := num.Min(1, 2*prev.Sampling); c.Sampling != want || b.Action != "raised" {
			t.Errorf("cycle %d: rate %v → %v (%s); want %v, raised at most twofold", c.Seq, prev.Sampling, c.Sampling, b.Action, want)
		}
		prev = c
	}
	if prev.Sampling != 1 {
		t.Errorf("after 20 quiet cycles the rate is %v; want the configured 1", prev.Sampling)
	}
}
