package monitor

import (
	"math"
	"testing"
)

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
// the statistics convert to nanoseconds; the mean agrees with nanotime's
// timing of the same calls within the trace format's 1 % (a ratio, not a
// duration, is asserted).
func TestCoarseTimesInNanoseconds(t *testing.T) {
	ps := newProbes(t, "test.example/clock", 1)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/clock.*(..))", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	defer SetRules(nil)
	const calls = 200
	var total int64
	for i := 0; i < calls; i++ {
		t0 := nanotime()
		spin(&ps[0], 50_000)
		total += nanotime() - t0
	}
	got := statsFor(t, ps[0].ID())
	if got.Count != calls {
		t.Fatalf("%d calls counted, want %d", got.Count, calls)
	}
	want := float64(total) / calls
	// The outer timing also holds the probe's own cost: a few hundred ns of 50 µs.
	if r := got.MeanNs / want; math.Abs(r-1) > 0.01 {
		t.Errorf("mean %.0f ns by the probe, %.0f ns by nanotime: ratio %.4f", got.MeanNs, want, r)
	} else {
		t.Logf("mean %.0f ns by the probe, %.0f ns by nanotime: ratio %.5f", got.MeanNs, want, r)
	}
}
