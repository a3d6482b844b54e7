package bench

import (
	"context"
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
	p := StandardPlan("synthetic", "/nonexistent", nopBuild, Experiment{Name: "e", Params: q})
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
	Baseline:    100,
	Deactivated: 110,
	Coarse:      150,
	FineNull:    200,
	FineAsync:   260,
	FineSync:    300,
	OTel:        5100,
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
		{FineSync, PortionW, FineNull, 10, 20, 20 / 500.0, "T 10, I 1, C 9, W 10"},
		{OTel, PortionPeer, Baseline, 500, 500, 1, "T 10, peer 500"},
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
