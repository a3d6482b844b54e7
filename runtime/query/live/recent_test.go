package live

import (
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// spin is a call of p that runs for d without sleeping: long enough that
// phase 1 times every call, so counts are exact.
func spin(p *monitor.Probe, d time.Duration) {
	if c := monitor.Enter(p); c.On() {
		defer c.Exit(nil)
	}
	for start := time.Now(); time.Since(start) < d; {
	}
}

// TestExplainFollowsTheRecentRate: a probe that ran thousands of calls
// a second and now runs one a second is estimated at one a second, the rate
// of the recent past, not the average since the program started.
func TestExplainFollowsTheRecentRate(t *testing.T) {
	setup(t)
	if _, err := monitor.AddRule(monitor.Rule{Pattern: "execution(* test.example/shop/util.Hash(..))", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	clearMarks()
	for i := 0; i < 5000; i++ { // the busy past
		spin(&probes[2], 20*time.Microsecond)
	}
	t0 := time.Now()
	addMark(t0, monitor.ReadCounters())
	for i := 0; i < 10; i++ { // the quiet present: 10 calls in 10 s
		spin(&probes[2], 20*time.Microsecond)
	}
	cat := readCatalogAt(t0.Add(recentMin))
	pr := cat.byID[probes[2].ID()]
	if pr.Rate < 0.99 || pr.Rate > 1.01 {
		t.Errorf("rate %.3g calls/s, want 1 (10 calls in the last 10 s)", pr.Rate)
	}
	if pr.MeanNs < 20e3 {
		t.Errorf("mean %.0f ns of calls that spin 20 µs", pr.MeanNs)
	}
	qs, err := query.Compile("SELECT count(*) FROM calls WHERE name = 'Hash'", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := engine.New(qs[0], cat, engine.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if e := p.Explain(); !strings.Contains(e, "util.Hash  coarse, 1.0 calls/s") {
		t.Errorf("the plan does not say 1.0 calls/s:\n%s", e)
	}
	// Without a mark old enough, since the program started.
	if r := readCatalogAt(t0.Add(recentMin - time.Second)).byID[probes[2].ID()].Rate; r < 2 {
		t.Errorf("rate since the start %.3g calls/s", r)
	}
}

// clearMarks drops the marks of the recent past: for the next recentMin
// (the timer's next mark is no base before it is that old) a catalog reads
// the statistics since the program started, whenever in the process's life
// a test runs.
func clearMarks() {
	marks.mu.Lock()
	marks.list = nil
	marks.mu.Unlock()
}
