package monitor

import (
	"math/rand"
	"testing"
	"time"
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
func fineProbes(t testing.TB, pkg string, n int) ([]Probe, *recordSink) {
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

// TestLongLivedTraceSampledInPieces runs a real long-lived trace through
// Enter and Exit: once its pieces have begun, each iteration is recorded with
// the rate in force, complete with its child. The phases are counted in
// iterations and judged by the records each phase wrote, never by windows of
// wall-clock time: a pause (a GC as the sink's slice grows, a busy machine)
// must not move an iteration from one phase to another. (The test that judged
// phases by time failed whenever such a pause ended the rate-1 phase inside
// its first, unjudged window; TestPiecesSynthetic covers the timing.)
func TestLongLivedTraceSampledInPieces(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/pieces", 3)
	saved := pieceWindow
	pieceWindow = int64(2e6) // 2 ms
	t.Cleanup(func() { pieceWindow = saved })
	if err := SetSampling(0.5); err != nil {
		t.Fatal(err)
	}
	records := func() int {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.records)
	}

	// Phase 0 waits until the pieces have begun (the root has run for a
	// window or two), then every phase lasts n iterations at its rate.
	const n = 2000
	rates := [3]float64{0.5, 0, 1}
	var wrote [3]int // records written in each phase
	phase, left, mark := -1, 0, 0
	deadline := time.Now().Add(time.Minute)
	longLived(ps, func(i int) bool {
		if phase < 0 {
			if context().pieces.depth == 0 {
				if time.Now().After(deadline) {
					t.Error("the pieces did not begin within a minute")
					return false
				}
				return true
			}
			if d := context().pieces.depth; d != 1 {
				t.Errorf("pieces at depth %d; want 1 (the iterations)", d)
			}
		} else {
			if left > 0 {
				left--
				return true
			}
			wrote[phase] = records() - mark
		}
		phase++
		if phase == len(rates) {
			return false
		}
		if err := SetSampling(rates[phase]); err != nil {
			t.Fatal(err)
		}
		// A pause of several windows right after the switch, as a GC or a
		// busy machine makes: it ended the old test's time-judged phase
		// inside its unjudged first window; counted phases do not care.
		time.Sleep(time.Duration(8 * pieceWindow))
		left, mark = n-1, records()
		return true
	})

	sink.mu.Lock()
	defer sink.mu.Unlock()
	var trace uint64
	for i, r := range sink.records {
		if trace != 0 && r.Trace != trace {
			t.Fatalf("the pieces of one trace have two trace ids: %d and %d", trace, r.Trace)
		}
		trace = r.Trace
		// An iteration's record follows its child's, with the eoi before it.
		if r.Probe == ps[2].ID() {
			if i+1 == len(sink.records) || sink.records[i+1].Probe != ps[1].ID() || sink.records[i+1].EOI+1 != r.EOI {
				t.Fatalf("record %d, a child (eoi %d), is not followed by its iteration: a piece was cut", i, r.EOI)
			}
		} else if r.Probe == ps[1].ID() && (i == 0 || sink.records[i-1].Probe != ps[2].ID()) {
			t.Fatalf("record %d, an iteration (eoi %d), has no child: a piece was cut", i, r.EOI)
		}
	}
	t.Logf("records of %d iterations: rate 0.5: %d, rate 0: %d, rate 1: %d", n, wrote[0], wrote[1], wrote[2])
	if wrote[2] != 2*n {
		t.Errorf("rate 1: %d records of %d iterations, want %d: the new rate did not reach the long-lived trace", wrote[2], n, 2*n)
	}
	if wrote[1] != 0 {
		t.Errorf("rate 0: %d records; the new rate did not reach the long-lived trace", wrote[1])
	}
	// Binomial(2000, 0.5): a standard deviation of 22 iterations.
	if got := wrote[0] / 2; got < n*35/100 || got > n*65/100 {
		t.Errorf("rate 0.5: %d of %d iterations recorded; want about half, not all or nothing", got, n)
	}
}

// fakeTrace drives a trace context's sampling with synthetic times, doing
// what enterFine and exitFine do around sampling.go: a deterministic test of
// the period and piece logic, whatever the machine's pace.
type fakeTrace struct {
	ctx   traceCtx
	now   int64
	open  []fakeCall // the calls entered and not yet exited, outermost first
	fresh int        // calls that decided anew (roots and pieces)
}

type fakeCall struct {
	t0      int64
	sampled bool
}

// enter enters a call and reports whether it is recorded.
func (f *fakeTrace) enter() bool {
	ctx := &f.ctx
	if ctx.ess == 0 {
		ctx.sampleRoot()
		f.fresh++
	} else {
		if ctx.pieces.redecide {
			f.fresh++
		}
		ctx.sampleCall()
	}
	ctx.ess++
	f.open = append(f.open, fakeCall{f.now, ctx.sampled})
	return ctx.sampled
}

// exit exits the innermost call after d nanoseconds more.
func (f *fakeTrace) exit(d int64) fakeCall {
	f.now += d
	c := f.open[len(f.open)-1]
	f.open = f.open[:len(f.open)-1]
	f.ctx.ess = uint32(len(f.open))
	f.ctx.exited(f.now)
	return c
}

// setThreshold sets the sampling threshold directly (rate 0 or 1 draw
// deterministically), restored after the test.
func setThreshold(t testing.TB, rate float64) {
	saved := sampleThreshold.Load()
	t.Cleanup(func() { sampleThreshold.Store(saved) })
	sampleThreshold.Store(uint64(rate * (1 << 32)))
}

// TestPiecesSynthetic walks a worker loop with synthetic times through every
// turn of the piece logic: no piece before the root has run a window, pieces
// from at most two windows on, rate changes (1, 0 with a long pause inside an
// iteration, 1 again) reaching the very next iteration, children following
// their iteration, and the end of the long call.
func TestPiecesSynthetic(t *testing.T) {
	nanosClock(t)
	w := pieceWindow
	const ms = int64(1e6)
	setThreshold(t, 1)
	f := &fakeTrace{}
	f.enter() // main, depth 0
	iterate := func(length int64) (it, child bool) {
		it = f.enter()
		child = f.enter()
		f.exit(length / 2)
		f.exit(length - length/2)
		return it, child
	}
	// Until the loop has run a window nothing is a piece; by two windows and
	// an iteration the iterations are.
	began := int64(-1)
	for f.now < 2*w+ms {
		if f.ctx.pieces.depth != 0 && began < 0 {
			began = f.now
		}
		iterate(ms)
	}
	if began < w || f.ctx.pieces.depth != 1 {
		t.Fatalf("pieces began at %v (window %v); piece depth at %v: %d, want 1", began, w, f.now, f.ctx.pieces.depth)
	}
	steps := []struct {
		rate  float64
		pause int64 // a long iteration, e.g. a GC or a blocked read
	}{{1, 0}, {0, 0}, {0, 50 * w}, {0, 0}, {1, 0}, {1, 3 * w}, {0, 0}, {1, 0}}
	for i, s := range steps {
		setThreshold(t, s.rate)
		before := f.fresh
		for j := 0; j < 3; j++ {
			length := ms
			if j == 1 {
				length += s.pause
			}
			it, child := iterate(length)
			if want := s.rate == 1; it != want || child != want {
				t.Fatalf("step %d (rate %v), iteration %d: recorded %v, child %v; want %v", i, s.rate, j, it, child, want)
			}
		}
		if f.fresh-before != 3 {
			t.Fatalf("step %d: %d of 3 iterations decided anew", i, f.fresh-before)
		}
	}
	// The loop returns: main's next call is a piece too (main is older still).
	setThreshold(t, 0)
	f.exit(ms)
	if f.ctx.pieces.depth != 0 || f.ctx.ess != 0 {
		t.Fatalf("after main returned: piece depth %d, ess %d", f.ctx.pieces.depth, f.ctx.ess)
	}
}

// TestPiecesLongCallReturns: main calls a long worker, whose calls are pieces;
// when the worker returns, main has run longer still, so main's next call (a
// second worker) is a piece, decided with the rate in force, and so are its
// calls once it has run a window.
func TestPiecesLongCallReturns(t *testing.T) {
	nanosClock(t)
	w := pieceWindow
	setThreshold(t, 1)
	f := &fakeTrace{}
	f.enter() // main
	f.enter() // worker, depth 1
	for f.now < 3*w {
		f.enter()
		f.exit(w / 10)
	}
	if f.ctx.pieces.depth != 2 {
		t.Fatalf("worker's calls: piece depth %d, want 2", f.ctx.pieces.depth)
	}
	f.exit(w / 10) // the worker returns
	if f.ctx.pieces.depth != 1 || !f.ctx.pieces.redecide {
		t.Fatalf("after the worker returned: piece depth %d, redecide %v; want 1, true", f.ctx.pieces.depth, f.ctx.pieces.redecide)
	}
	setThreshold(t, 0)
	if f.enter() { // the second worker
		t.Fatal("the second worker was recorded at rate 0: it did not decide anew")
	}
	setThreshold(t, 1)
	if f.enter() { // its first call follows it
		t.Fatal("a call of an unrecorded short worker was recorded: a piece was cut")
	}
	f.exit(w / 10)
}

// TestPiecesNeverCutShortCalls runs random call trees with random durations,
// some far longer than a window, and checks the promise of sampling in
// pieces: a call decides anew (is a piece) only when its caller has run for at
// least a window, and every other call follows its caller's decision.
func TestPiecesNeverCutShortCalls(t *testing.T) {
	nanosClock(t)
	w := pieceWindow
	rng := rand.New(rand.NewSource(1))
	setThreshold(t, 0.5) // draws vary; the checks do not depend on them
	for tree := 0; tree < 200; tree++ {
		f := &fakeTrace{}
		f.enter()
		for steps := 0; steps < 2000 && len(f.open) > 0; steps++ {
			// Durations from microseconds to several windows, mostly short.
			d := int64(rng.ExpFloat64() * float64(w) / 20)
			if rng.Intn(50) == 0 {
				d = rng.Int63n(3 * w)
			}
			if len(f.open) < 8 && rng.Intn(2) == 0 {
				caller := f.open[len(f.open)-1]
				redecides := f.ctx.pieces.redecide
				f.now += d
				rec := f.enter()
				if redecides && f.now-caller.t0 < w {
					t.Fatalf("tree %d: a call decided anew when its caller had run %v (< window %v)", tree, f.now-caller.t0, w)
				}
				if !redecides && rec != caller.sampled {
					t.Fatalf("tree %d: a call that is no piece does not follow its caller", tree)
				}
			} else {
				f.exit(d)
			}
		}
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

// nanosClock makes the probes' clock nanotime for a test that feeds the
// sampling logic synthetic times in nanoseconds.
func nanosClock(t *testing.T) {
	saved := useTSC
	useTSC = false
	t.Cleanup(func() { useTSC = saved })
}
