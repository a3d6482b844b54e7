package monitor

import "testing"

// spin busy-waits d nanoseconds by nanotime.
//
//go:noinline
func spin(p *Probe, d int64) {
	if c := Enter(p); c.On() {
		defer c.Exit(nil)
	}
	for end := nanotime() + d; nanotime() < end; {
	}
}

// TestCoarseTimesInNanoseconds: the probes time calls with the tick clock and
// the statistics convert to nanoseconds. Every call spins at least spinNs by
// nanotime and lasts less than its outer nanotime timing, so the converted
// mean must lie between the two within the trace format's 1 %. Bounds rather
// than a ratio to the outer timing: on a loaded machine or under -race the
// outer timing also holds preemptions the probe does not see.
func TestCoarseTimesInNanoseconds(t *testing.T) {
	ps := newProbes(t, "test.example/clock", 1)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/clock.*(..))", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	const calls, spinNs = 200, 50_000
	var total int64
	for i := 0; i < calls; i++ {
		t0 := nanotime()
		spin(&ps[0], spinNs)
		total += nanotime() - t0
	}
	got := statsFor(t, ps[0].ID())
	if got.Count != calls {
		t.Fatalf("%d calls counted, want %d", got.Count, calls)
	}
	outer := float64(total) / calls
	if got.MeanNs < 0.99*spinNs || got.MeanNs > 1.01*outer {
		t.Errorf("mean %.0f ns by the probe, want between %d ns (the spin) and %.0f ns (nanotime around the call) within 1%%", got.MeanNs, spinNs, outer)
	} else {
		t.Logf("mean %.0f ns by the probe: spin %d ns, nanotime around the call %.0f ns", got.MeanNs, spinNs, outer)
	}
}
