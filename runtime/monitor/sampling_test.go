package monitor

import (
	"testing"
)

// longLived runs a worker-loop trace: a root call (probe 0) whose body runs
// iterations (probe 1), each of which calls a child (probe 2), until rounds
// says stop; rounds gets the iteration's index and may change the rate.
func longLived(ps []Probe, rounds func(i int) bool) {
	root := Enter(&ps[0])
	defer root.Exit(nil)
	for i := 0; rounds(i); i++ {
		func() {
			it := Enter(&ps[1])
			defer it.Exit(nil)
			call(&ps[2], nil)
		}()
	}
}

// fineProbes registers n probes in pkg, all fine, with their records going to
// a fresh sink; everything is restored after the test.
func fineProbes(t *testing.T, pkg string, n int) ([]Probe, *recordSink) {
	t.Helper()
	ps := newProbes(t, pkg, n)
	if _, err := AddRule(Rule{Pattern: "execution(* " + pkg + ".*(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	sink := &recordSink{}
	prev := SetSink(sink)
	t.Cleanup(func() {
		SetSink(prev)
		SetRules(nil)
		SetSampling(1)
	})
	return ps, sink
}

// TestLongLivedTraceSampledInPieces: a trace that runs for many windows is
// recorded in pieces, one per iteration of its long call, each decided with the
// rate in force and each complete; short calls are never cut.
func TestLongLivedTraceSampledInPieces(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/pieces", 3)
	saved := pieceWindow
	pieceWindow = int64(2e6) // 2 ms
	t.Cleanup(func() { pieceWindow = saved })
	if err := SetSampling(0.5); err != nil {
		t.Fatal(err)
	}

	// Phases by time: rate 0.5 for 20 windows, then 0 for 5, then 1 for 5. Each
	// phase is judged from two windows after its start on, when the pieces have
	// certainly begun.
	start := nanotime()
	w := pieceWindow
	var phase [3]struct{ from, to int64 }
	started0 := 0
	// Phases 1 and 2 also last a number of iterations: on a loaded machine the
	// loop may not run for several windows.
	var n [3]int
	phase[0].from = start + 3*w
	longLived(ps, func(i int) bool {
		now := nanotime()
		switch {
		case now < start+20*w || i < 300:
			phase[0].to = now
			if now >= phase[0].from {
				started0++ // an iteration starts within phase 0's judged span
			}
			return true
		case phase[1].from == 0:
			SetSampling(0)
			phase[1].from = now + w
		case now < phase[1].from+5*w || n[1] < 2000:
			phase[1].to = now
			n[1]++
		case phase[2].from == 0:
			SetSampling(1)
			phase[2].from = now + w
		case now < phase[2].from+5*w || n[2] < 2000:
			phase[2].to = now
			n[2]++
		default:
			return false
		}
		return true
	})

	// Records by iteration: an iteration's record and its child's.
	sink.mu.Lock()
	defer sink.mu.Unlock()
	iters := map[uint32]int64{} // eoi → TIn, of iterations
	var children []uint32       // eoi of children, whose parent's eoi is one less
	var trace uint64
	for _, r := range sink.records {
		if trace != 0 && r.Trace != trace {
			t.Fatalf("the pieces of one trace have two trace ids: %d and %d", trace, r.Trace)
		}
		trace = r.Trace
		switch r.Probe {
		case ps[1].ID():
			iters[r.EOI] = r.TIn
		case ps[2].ID():
			children = append(children, r.EOI)
		}
	}
	for _, eoi := range children {
		if _, ok := iters[eoi-1]; !ok {
			t.Fatalf("a child (eoi %d) was recorded without its iteration: a piece was cut", eoi)
		}
	}
	if len(children) != len(iters) {
		t.Fatalf("%d iterations but %d children recorded: a piece was cut", len(iters), len(children))
	}
	in := func(p int, tin int64) bool { return tin >= phase[p].from && tin <= phase[p].to }
	var recorded [3]int
	for _, tin := range iters {
		for p := range phase {
			if in(p, tin) {
				recorded[p]++
			}
		}
	}
	// The loop counted the iterations that started in phase 0's span; at rate
	// 0.5 about half of them are recorded.
	expect := float64(started0)
	t.Logf("rate 0.5: %d of about %.0f iterations recorded; rate 0: %d; rate 1: %d", recorded[0], expect, recorded[1], recorded[2])
	if recorded[2] == 0 {
		t.Fatal("rate 1: no iteration recorded; the new rate did not reach the long-lived trace")
	}
	if recorded[1] != 0 {
		t.Errorf("rate 0: %d iterations recorded; the new rate did not reach the long-lived trace", recorded[1])
	}
	if f := float64(recorded[0]) / expect; f < 0.2 || f > 0.8 {
		t.Errorf("rate 0.5: %d of about %.0f iterations recorded (%.0f%%); want about half, not all or nothing", recorded[0], expect, 100*f)
	}
}

// TestShortTracesAreWhole: traces shorter than the window are never cut, at
// any rate: a child is recorded exactly when its root is.
func TestShortTracesAreWhole(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/whole", 3)
	SetSampling(0.5)
	for i := 0; i < 200; i++ {
		n := 0
		longLived(ps, func(int) bool { n++; return n <= 3 })
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	perTrace := map[uint64]int{}
	for _, r := range sink.records {
		perTrace[r.Trace]++
	}
	for id, n := range perTrace {
		if n != 7 { // the root, three iterations, three children
			t.Errorf("trace %d has %d records; want 7 or none", id, n)
		}
	}
	if n := len(perTrace); n < 50 || n > 150 {
		t.Errorf("%d of 200 traces recorded at 50%%", n)
	}
}

// BenchmarkPieces measures what sampling in pieces adds to a fine call below
// a trace's root: the entry's and the exit's bookkeeping, without the clock
// (the exit's time is the one the probe read anyway).
func BenchmarkPieces(b *testing.B) {
	ctx := &traceCtx{}
	ctx.sampleRoot()
	ctx.ess = 1
	t := int64(1)
	for i := 0; i < b.N; i++ {
		ctx.sampleCall()
		ctx.ess = 2
		ctx.ess = 1
		t += 100
		ctx.exited(t)
	}
}
