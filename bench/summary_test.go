package bench

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nopBuild stands in for the tigris build in plans that are never run.
func nopBuild(context.Context, string) error { return nil }

// syntheticResults makes a standard plan's results without running anything:
// every configuration's steady-state calls take steady[config] ns, its warm-up
// calls 1 ms (which must be discarded), with two goroutines.
func syntheticResults(t *testing.T, mt time.Duration, steady map[string]int64) *Results {
	t.Helper()
	q := Params{Calls: 40, Warmup: 0.25, Depth: 10, MethodTime: mt, Runs: 3, Goroutines: 2}
	p := StandardPlan("synthetic", "/nonexistent", nopBuild, 0, 0, Experiment{Name: "e", Params: q})
	res := &Results{Plan: p, Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	skip := WarmupCalls(q.Calls, q.Warmup)
	for run := 1; run <= q.Runs; run++ {
		for _, v := range p.Variants {
			ns, ok := steady[v.Name]
			if !ok {
				t.Fatalf("no timing for %s", v.Name)
			}
			r := RunData{Experiment: "e", Variant: v.Name, Run: run, Goroutines: q.Goroutines, Calls: q.Calls,
				Depth: q.Depth, MethodTime: q.MethodTime, ClockPairNs: 20 + float64(run-2), ClockPairIters: 1000}
			// The peer allocates 3 objects of 100 bytes per monitored call, and
			// drops half of its spans; fine-async loses 8 records per run.
			calls := int64(q.Calls * q.Goroutines * q.Depth)
			switch v.Name {
			case OTel:
				r.Mallocs, r.AllocBytes = 3*calls, 300*calls
				r.Trace = &TraceCount{Unit: "spans", Expected: calls, Written: calls / 2, Lost: calls / 2}
			case FineAsync:
				r.Trace = &TraceCount{Unit: "records", Expected: calls, Written: calls - 8, Lost: 8}
			case FineSync:
				r.Trace = &TraceCount{Unit: "records", Expected: calls, Written: calls}
			}
			for g := 0; g < q.Goroutines; g++ {
				for c := 0; c < q.Calls; c++ {
					x := ns
					if c < skip {
						x = 1_000_000
					}
					r.Timings = append(r.Timings, x)
				}
			}
			res.Runs = append(res.Runs, r)
		}
	}
	return res
}

var stressTimings = map[string]int64{
	Baseline:      100,
	Deactivated:   110,
	Coarse:        150,
	FineNull:      200,
	FineAsync:     260,
	FineAsyncDrop: 250,
	FineSync:      300,
	OTelLossless:  5100,
	OTel:          2100,
	ExecTrace:     1100,
}

func TestPortions(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	s, err := Summarize(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Experiments) != 1 {
		t.Fatalf("%d experiments, want 1", len(s.Experiments))
	}
	e := &s.Experiments[0]
	if e.ClockPairNs != 20 {
		t.Errorf("clock pair %v, want 20 (the median of 19, 20, 21 per configuration)", e.ClockPairNs)
	}
	for _, c := range []struct {
		name              string
		adds              Portion
		over              string
		portion, overhead float64 // ns per monitored call
		vsPeer            float64
		segments          string
	}{
		{Baseline, PortionT, "", 0, 0, 0, "T 10"},
		{Deactivated, PortionI, Baseline, 1, 1, 1 / 500.0, "T 10, I 1"},
		{Coarse, PortionC, Deactivated, 4, 5, 5 / 500.0, "T 10, I 1, C 4"},
		{FineNull, PortionC, Deactivated, 9, 10, 10 / 500.0, "T 10, I 1, C 9"},
		{FineAsync, PortionW, FineNull, 6, 16, 16 / 500.0, "T 10, I 1, C 9, W 6"},
		{FineAsyncDrop, PortionW, FineNull, 5, 15, 15 / 500.0, "T 10, I 1, C 9, W 5"},
		{FineSync, PortionW, FineNull, 10, 20, 20 / 500.0, "T 10, I 1, C 9, W 10"},
		{OTelLossless, PortionPeer, Baseline, 500, 500, 0, "T 10, peer 500"}, // the peer itself
		{OTel, PortionPeer, Baseline, 200, 200, 200 / 500.0, "T 10, peer 200"},
		{ExecTrace, PortionPeer, Baseline, 100, 100, 100 / 500.0, "T 10, peer 100"},
	} {
		cs := e.Config(c.name)
		if cs == nil {
			t.Errorf("no summary of %s", c.name)
			continue
		}
		if cs.Adds != c.adds || cs.Over != c.over {
			t.Errorf("%s adds %s over %q, want %s over %q", c.name, cs.Adds, cs.Over, c.adds, c.over)
		}
		if cs.Stats.N != 3*2*30 || cs.Stats.Max != stressTimings[c.name] {
			t.Errorf("%s: n = %d, max = %d; want %d calls after the warm-up, max %d", c.name, cs.Stats.N, cs.Stats.Max, 3*2*30, stressTimings[c.name])
		}
		if !near(cs.Portion.Mean, c.portion) || !near(cs.Portion.Median, c.portion) ||
			!near(cs.Overhead.Mean, c.overhead) || !near(cs.Overhead.Median, c.overhead) {
			t.Errorf("%s: portion %+v, overhead %+v; want %v and %v ns", c.name, cs.Portion, cs.Overhead, c.portion, c.overhead)
		}
		if !near(cs.Portion.MeanClockPairs, c.portion/20) || !near(cs.Portion.MedianClockPairs, c.portion/20) ||
			!near(cs.Overhead.MeanClockPairs, c.overhead/20) {
			t.Errorf("%s: ×clock pair %v, %v, %v; want %v, %v", c.name, cs.Portion.MeanClockPairs,
				cs.Portion.MedianClockPairs, cs.Overhead.MeanClockPairs, c.portion/20, c.overhead/20)
		}
		if cs.Portion.CI95 != 0 {
			t.Errorf("%s: CI of constant samples %v, want 0", c.name, cs.Portion.CI95)
		}
		if !near(cs.VsPeer, c.vsPeer) {
			t.Errorf("%s: vs peer %v, want %v", c.name, cs.VsPeer, c.vsPeer)
		}
		var segs []string
		for _, sg := range e.Segments(cs) {
			segs = append(segs, string(sg.Portion)+" "+strconv.FormatFloat(sg.Ns, 'f', -1, 64))
		}
		if got := strings.Join(segs, ", "); got != c.segments {
			t.Errorf("%s: segments %q, want %q", c.name, got, c.segments)
		}
		if len(cs.RunMeans) != 3 || cs.RunMeans[0] != float64(stressTimings[c.name]) {
			t.Errorf("%s: run means %v, want 3 × %d", c.name, cs.RunMeans, stressTimings[c.name])
		}
		if !near(cs.VsPeerMedian, c.vsPeer) {
			t.Errorf("%s: vs peer (median) %v, want %v", c.name, cs.VsPeerMedian, c.vsPeer)
		}
	}
	// 3 runs × 40 calls × 2 goroutines × depth 10 = 2,400 monitored calls.
	if peer := e.Config(OTel); peer.AllocsPerCall != 3 || peer.AllocBytesPerCall != 300 ||
		*peer.Trace != (TraceCount{Unit: "spans", Expected: 2400, Written: 1200, Lost: 1200}) {
		t.Errorf("peer: %v allocs, %v bytes per call, trace %+v", peer.AllocsPerCall, peer.AllocBytesPerCall, peer.Trace)
	}
	if fa := e.Config(FineAsync); fa.AllocsPerCall != 0 || *fa.Trace != (TraceCount{Unit: "records", Expected: 2400, Written: 2400 - 24, Lost: 24}) {
		t.Errorf("fine-async: %v allocs per call, trace %+v", fa.AllocsPerCall, fa.Trace)
	}
	if e.Config(Coarse).Trace != nil {
		t.Error("coarse has a trace count")
	}
}

func TestTargets(t *testing.T) {
	check := func(timings map[string]int64, mutate func(*Results)) map[string]TargetCheck {
		t.Helper()
		res := syntheticResults(t, 0, timings)
		if mutate != nil {
			mutate(res)
		}
		s, err := Summarize(res)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]TargetCheck{}
		for _, tc := range s.Experiments[0].Targets {
			got[tc.Name] = tc
		}
		return got
	}
	// Clock pair 20 ns. I = 1 ns, C = 4 ns = 0.2 cp, C+W = (260-110)/10 = 15 ns
	// = 0.75 cp but 24 records lost, the peer's overhead 500 ns = 31 × the
	// fine-async overhead of 16 ns. A hundredth of an allocation per call is
	// the process' background, not a probe path: still allocation-free.
	got := check(stressTimings, func(res *Results) {
		for i := range res.Runs {
			if r := &res.Runs[i]; r.Variant == Deactivated {
				r.Mallocs = int64(r.Calls*r.Goroutines*r.Depth) / 100
			}
		}
	})
	for name, met := range map[string]bool{"I": true, "C": true, "C+W": false, "allocations": true, "peer": true} {
		tc, ok := got[name]
		if !ok || tc.Met != met {
			t.Errorf("target %s: %+v, want met = %v", name, tc, met)
		}
	}
	if tc := got["C+W"]; !near(tc.Value, 0.75) || !strings.Contains(tc.Measured, "24 of 2400 records lost") {
		t.Errorf("C+W: %+v", tc)
	}
	if tc := got["peer"]; !near(tc.Value, 500.0/16) {
		t.Errorf("peer: %+v", tc)
	}

	slow := maps.Clone(stressTimings)
	slow[Deactivated] = 130 // I = 3 ns
	slow[Coarse] = 200      // C = 7 ns = 0.35 cp
	slow[FineAsync] = 600   // the peer only 500/50 = 10 × costlier: still met
	got = check(slow, func(res *Results) {
		for i := range res.Runs {
			r := &res.Runs[i]
			if r.Variant == FineAsync {
				r.Trace.Written, r.Trace.Lost = r.Trace.Expected, 0
			}
			if r.Variant == Coarse {
				r.Mallocs = int64(r.Calls * r.Goroutines * r.Depth) // one per call
			}
		}
	})
	for name, met := range map[string]bool{"I": false, "C": true, "C+W": false, "allocations": false, "peer": true} {
		if tc := got[name]; tc.Met != met {
			t.Errorf("slow target %s: %+v, want met = %v", name, tc, met)
		}
	}
	if tc := got["allocations"]; !strings.Contains(tc.Measured, "(coarse)") || tc.Value != 1 {
		t.Errorf("allocations: %+v", tc)
	}

	// Noise can make fine-async's mean overhead negative: the medians decide.
	got = check(stressTimings, func(res *Results) {
		for i := range res.Runs {
			if r := &res.Runs[i]; r.Variant == FineAsync && r.Run == 1 {
				for j := range r.Timings[:r.Calls/2] {
					// 20 of the 180 steady timings, far below zero (a clock
					// stepping back): the mean drops below the baseline's,
					// the median stays.
					r.Timings[r.Calls-1-j] = -10_000
				}
			}
		}
	})
	if tc := got["peer"]; !tc.Met || !strings.Contains(tc.Measured, "mean overhead lost in noise") || !near(tc.Value, 500.0/16) {
		t.Errorf("peer with a negative mean overhead: %+v", tc)
	}

	// With a long method time, I and the allocations are not judged.
	res500 := syntheticResults(t, 500*time.Microsecond, stressTimings)
	s500, err := Summarize(res500)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tc := range s500.Experiments[0].Targets {
		names = append(names, tc.Name)
	}
	if strings.Join(names, ",") != "C,C+W,peer" {
		t.Errorf("targets at 500 µs: %v, want C, C+W and peer", names)
	}

	// Without the tigris configurations there is nothing to check.
	res := syntheticResults(t, 0, stressTimings)
	p, err := res.Plan.Only(OTel)
	if err != nil {
		t.Fatal(err)
	}
	res.Plan = p
	s, err := Summarize(res)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Experiments[0].Targets); n != 0 {
		t.Errorf("%d targets checked without tigris configurations: %+v", n, s.Experiments[0].Targets)
	}
}

func TestSummarizeWithoutPeerOrRuns(t *testing.T) {
	res := syntheticResults(t, 0, stressTimings)
	var runs []RunData
	for _, r := range res.Runs {
		if r.Variant == Baseline || r.Variant == Deactivated {
			runs = append(runs, r)
		}
	}
	res.Runs = runs
	s, err := Summarize(res)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Experiments[0]
	if len(e.Configs) != 2 || e.Config(Deactivated).VsPeer != 0 {
		t.Errorf("configs %+v; want baseline and deactivated, no peer ratio", e.Configs)
	}
	res.Runs = nil
	if _, err := Summarize(res); err == nil {
		t.Error("Summarize without baseline runs: no error")
	}
}

func TestScaling(t *testing.T) {
	mk := func(name string, g int, over, async, drop float64, lost float64) ExperimentSummary {
		q := Params{Depth: 10, Warmup: 0.5, Goroutines: g}
		e := ExperimentSummary{Name: name, Params: q, Configs: []ConfigSummary{
			{Name: Baseline, Adds: PortionT},
			{Name: FineNull, Adds: PortionC, Over: Deactivated, Overhead: Cost{Median: over}, CPUPerCall: 100, CallsPerSec: 1e7},
			{Name: FineAsync, Adds: PortionW, Over: FineNull, Overhead: Cost{Median: async}, Portion: Cost{Median: async - over},
				CPUPerCall: 116, CallsPerSec: 9e6, Trace: &TraceCount{Expected: 100, Written: 100}},
			{Name: FineAsyncDrop, Adds: PortionW, Over: FineNull, Overhead: Cost{Median: drop}, Portion: Cost{Median: drop - over},
				CallsPerSec: 9.5e6, Trace: &TraceCount{Expected: 100, Written: 100 - int64(lost), Lost: int64(lost)}},
		}}
		return e
	}
	exps := []ExperimentSummary{
		mk("mt0-g8", 8, 40, 60, 45, 70),
		{Name: "mt500us", Params: Params{Depth: 10, Warmup: 0.5, Goroutines: 1, MethodTime: 500 * time.Microsecond}},
		mk("mt0", 1, 40, 44, 44, 0),
		mk("mt0-g2", 2, 40, 58, 45, 60),
	}
	sc := scalingOf(exps)
	if sc == nil {
		t.Fatal("no series found")
	}
	if !slices.Equal(sc.Experiments, []string{"mt0", "mt0-g2", "mt0-g8"}) || !slices.Equal(sc.Goroutines, []int{1, 2, 8}) {
		t.Errorf("series %v %v", sc.Experiments, sc.Goroutines)
	}
	if len(sc.Rows) != 3 || sc.Rows[1].Config != FineAsync {
		t.Fatalf("rows %+v", sc.Rows)
	}
	a := sc.Rows[1]
	if !slices.Equal(a.OverheadMedian, []float64{44, 58, 60}) || !slices.Equal(a.PortionMedian, []float64{4, 18, 20}) ||
		!slices.Equal(a.PortionCPU, []float64{16, 16, 16}) || !slices.Equal(a.LostShare, []float64{0, 0, 0}) {
		t.Errorf("fine-async across the series: %+v", a)
	}
	if d := sc.Rows[2]; !slices.Equal(d.LostShare, []float64{0, 0.6, 0.7}) || !slices.Equal(d.PortionCPU, []float64{0, 0, 0}) {
		t.Errorf("fine-async-drop across the series: %+v", d)
	}
	if sc.Rows[0].LostShare != nil {
		t.Errorf("fine-null has loss shares: %v", sc.Rows[0].LostShare)
	}
	if scalingOf(exps[1:2]) != nil {
		t.Error("a series of one experiment")
	}
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	writeScaling(bw, sc)
	bw.Flush()
	for _, want := range []string{"Goroutine series (mt0, mt0-g2, mt0-g8)", "8 goroutine(s)", "lost %"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("series table lacks %q:\n%s", want, b.String())
		}
	}
}
