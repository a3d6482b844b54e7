package analyzer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/internal/num"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// fakeCost makes the budget controller decide with cost instead of a
// calibration, and restores the sampling rate and the cost afterwards.
func fakeCost(t testing.TB, cost monitor.FineCost) {
	t.Helper()
	an.mu.Lock()
	saved := an.cost
	an.cost = &cost
	an.mu.Unlock()
	t.Cleanup(func() {
		an.mu.Lock()
		an.cost = saved
		an.mu.Unlock()
		monitor.SetSampling(1)
	})
}

// withBudget registers n probes in pkg and analyses "most frequent" on demand
// with the overhead budget and a fake calibration; the first window starts when
// it returns.
func withBudget(t *testing.T, pkg string, n int, budget float64, cost monitor.FineCost) ([]monitor.Probe, settings.Analysis) {
	t.Helper()
	ps := newProbes(t, pkg, n)
	a := manual("most frequent")
	a.Budget = budget
	useAnalysis(t, a)
	fakeCost(t, cost)
	analyze(t)
	return ps, a
}

func TestAnalyzerBudgetLowersSampling(t *testing.T) {
	// A record that costs a second: any fine call rate breaks a 2 % budget.
	ps, a := withBudget(t, "test.example/budget", 5, 0.02, monitor.FineCost{CallNs: 0, RecordNs: 1e9, Sink: "fake"})
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
	if monitor.Sampling() != 1 || monitor.EffectiveSampling() != c.Sampling {
		t.Errorf("Sampling() = %v, monitor.EffectiveSampling() = %v; want the configured 1 and the cycle's %v", monitor.Sampling(), monitor.EffectiveSampling(), c.Sampling)
	}
	// The budget is a ceiling on the configured rate, not a replacement for it.
	if err := monitor.SetSampling(0.5); err != nil {
		t.Fatal(err)
	}
	if monitor.EffectiveSampling() != num.Min(0.5, c.Sampling) {
		t.Errorf("after monitor.SetSampling(0.5): effective %v, want %v", monitor.EffectiveSampling(), num.Min(0.5, c.Sampling))
	}
	b := a
	b.Budget = 0
	if err := SetAnalysis(b); err != nil {
		t.Fatal(err)
	}
	if monitor.EffectiveSampling() != 0.5 {
		t.Errorf("budget off: effective sampling %v, want the configured 0.5", monitor.EffectiveSampling())
	}
}

func TestDecideSampling(t *testing.T) {
	cost := monitor.FineCost{CallNs: 10, RecordNs: 1000}
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
		{"fixed cost alone too much", budgetInput{budget: 0.02, cost: monitor.FineCost{CallNs: 1e4, RecordNs: 1}, procs: 1, callsPerSec: 1e4, configured: 1, previous: 1}, minSampling, "floor", false},
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

// TestBudgetRaisesGradually runs cycles through the analyzer: a burst makes the
// controller lower the rate, then quiet windows let it come back, at most twice
// the previous cycle's rate per cycle. Each decision's Previous is the rate the
// cycle before chose, not the configured rate.
func TestBudgetRaisesGradually(t *testing.T) {
	// Any burst breaks the budget.
	ps, _ := withBudget(t, "test.example/budgetramp", 5, 0.02, monitor.FineCost{CallNs: 0, RecordNs: 1e9, Sink: "fake"})
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

// countingSink counts the records that reach it.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) Define(writer.ProbeDef) {}
func (s *countingSink) Write(*writer.Record)   { s.n.Add(1) }

// fakeClock makes the analyzer's clock advance only when the test says so.
func fakeClock(t testing.TB) (advance func(time.Duration)) {
	t.Helper()
	at := time.Now()
	clock = func() time.Time { return at }
	t.Cleanup(func() { clock = time.Now })
	return func(d time.Duration) { at = at.Add(d) }
}

// TestBudgetControlLoop runs the controller as a loop: 60 cycles of one
// simulated second each, through real cycles, real fine calls and real sampling
// into a counting sink, under a load that steps up, jitters, and steps down.
// The plant is what the budget meters: the CPU time the records written in a
// window cost at the (fake) calibrated price. The loop must
//   - lower at once: after a load step up, at most one window (the one in
//     which the step happened) exceeds the budget;
//   - converge without oscillating: under a steady load the rate settles, and
//     under a load that jitters by ±10 % it moves by no more than the load does;
//   - raise at most twofold per cycle, up to the configured rate.
func TestBudgetControlLoop(t *testing.T) {
	const pkg = "test.example/budgetloop"
	// A record costs 20 µs (fake); with 2000 calls a second, a 10 % rate uses
	// 4 ms of CPU a second, which is the budget: share = calls×rate×RecordNs/(procs×1e9).
	const recordNs, high, low = 20e3, 2000, 150
	ps, a := withBudget(t, pkg, 3, high*0.1*recordNs/(float64(procs())*1e9), monitor.FineCost{CallNs: 0, RecordNs: recordNs, Sink: "fake"})
	sink := &countingSink{}
	prev := monitor.SetSink(sink)
	t.Cleanup(func() { monitor.SetSink(prev) })
	advance := fakeClock(t)

	// load[k] is Fa's calls in cycle k's window: low, a step up, ±10 % jitter,
	// steady, a step down.
	var load []int
	jitter := []float64{1, 1.1, 0.9, 1.05, 0.95, 1.1, 0.92, 1, 1.08, 0.9}
	for k := 0; k < 60; k++ {
		switch {
		case k < 10:
			load = append(load, low)
		case k < 20:
			load = append(load, int(high*jitter[k-10]))
		case k < 35:
			load = append(load, high)
		default:
			load = append(load, low)
		}
	}
	share := func(records int64) float64 { return float64(records) * recordNs / (float64(procs()) * 1e9) }

	var cycles []Cycle
	var measured []float64
	for k, n := range load {
		before := sink.n.Load()
		callN(&ps[0], n) // Fa: the most frequent, selected from the first cycle on
		callN(&ps[1], 2)
		callN(&ps[2], 1)
		advance(time.Second)
		c := analyze(t)
		if c.Budget == nil || !slices.Equal(c.Selected, []string{sig(pkg, "Fa")}) {
			t.Fatalf("cycle %d: selected %q, budget %+v; want Fa with a decision", k, c.Selected, c.Budget)
		}
		cycles = append(cycles, c)
		measured = append(measured, share(sink.n.Load()-before))
	}
	var rows []string
	for k, c := range cycles {
		b := c.Budget
		rows = append(rows, fmt.Sprintf("%2d load %4d rate %.4f %-7s measured %.5f budget %.5f", k, load[k], b.Rate, b.Action, measured[k], a.Budget))
		if k > 0 && b.Previous != cycles[k-1].Budget.Rate {
			t.Errorf("cycle %d: previous %v; want the last cycle's rate %v", k, b.Previous, cycles[k-1].Budget.Rate)
		}
		if b.Rate > 1 || (k > 0 && b.Rate > 2*b.Previous*(1+1e-12)) {
			t.Errorf("cycle %d: rate %v after %v: above the configured rate or more than twofold", k, b.Rate, b.Previous)
		}
		if b.Share > a.Budget*(1+1e-9) {
			t.Errorf("cycle %d: predicted share %v over the budget %v", k, b.Share, a.Budget)
		}
		// What the previous decision led to, measured. The window of the load step
		// (cycle 10) ran at the low load's rate; every other one must keep to the
		// budget, give or take the sampling's randomness (±4 standard deviations).
		if k == 0 || k == 10 {
			continue
		}
		r := cycles[k-1].Budget.Rate
		sd := math.Sqrt(float64(load[k]) * r * (1 - r))
		grew := math.Max(1, float64(load[k])/float64(load[k-1])) // the load moved after the decision
		if limit := a.Budget*grew + share(int64(4*sd+1)); measured[k] > limit {
			t.Errorf("cycle %d: fine records took %.5f of the CPU for a budget of %.5f", k, measured[k], a.Budget)
		}
	}
	if t.Failed() {
		t.Logf("the loop:\n%s", strings.Join(rows, "\n"))
	}
	// Lowered at once on the step, to the rate the budget allows.
	if got := cycles[10].Budget; got.Action != "lowered" || math.Abs(got.Rate-0.1/jitter[0]) > 1e-9 {
		t.Errorf("step up: %s to %v; want lowered to 0.1", got.Action, got.Rate)
	}
	// Under jitter the rate moves no more than the load does (no amplification).
	for k := 11; k < 20; k++ {
		dl := math.Abs(float64(load[k])/float64(load[k-1]) - 1)
		dr := math.Abs(cycles[k].Budget.Rate/cycles[k-1].Budget.Rate - 1)
		if dr > dl/(1-dl)+1e-9 {
			t.Errorf("cycle %d: load moved %.0f %%, rate %.0f %%", k, 100*dl, 100*dr)
		}
	}
	// Settled under a steady load: one rate, kept.
	for k := 21; k < 35; k++ {
		if c := cycles[k].Budget; c.Rate != cycles[20].Budget.Rate || c.Action != "kept" {
			t.Errorf("steady load, cycle %d: %s %v; want kept at %v", k, c.Action, c.Rate, cycles[20].Budget.Rate)
		}
	}
	// Raised twofold per cycle after the step down, until the configured rate.
	for k := 35; k < 60 && cycles[k-1].Budget.Rate < 1; k++ {
		want := math.Min(1, 2*cycles[k-1].Budget.Rate)
		if c := cycles[k].Budget; math.Abs(c.Rate-want) > 1e-12 || c.Action != "raised" {
			t.Errorf("step down, cycle %d: %s %v; want raised to %v", k, c.Action, c.Rate, want)
		}
	}
	if last := cycles[len(cycles)-1].Budget; last.Rate != 1 {
		t.Errorf("after the step down the rate ends at %v; want the configured 1", last.Rate)
	}
}

// TestHumanForms: the budget's reason and a selection's reasons round what
// was measured or worked out to three significant digits and give units.
func TestHumanForms(t *testing.T) {
	b := Budget{Budget: 0.02, FineCallsPerSec: 167043.2, Configured: 1, Rate: 0.4661608583, Action: "lowered"}
	if got, want := b.Reason(), "overhead budget 2% of CPU: 167k fine calls/s allow 46.6% (lowered)"; got != want {
		t.Errorf("Reason() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		metric string
		v      float64
		want   string
	}{
		{"mean-time", 2.713e5, "271µs"}, {"inter-arrival", 11039087524, "11s"}, {"count", 1657, "1657"}, {"count", 1.372e6, "1.37M"},
		{"error-rate", 0.0123, "1.23%"}, {"concurrency", 1.23456, "1.23"}, {"result-size-sd", 12.3456, "12.3"}, {"mean-time", math.NaN(), "unknown"},
	} {
		if got := FormatMetric(c.metric, c.v); got != c.want {
			t.Errorf("FormatMetric(%s, %v) = %q, want %q", c.metric, c.v, got, c.want)
		}
	}
}
