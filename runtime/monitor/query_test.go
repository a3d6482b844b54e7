package monitor

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func modesOf(ps []Probe) []uint32 {
	out := make([]uint32, len(ps))
	for i := range ps {
		out[i] = ps[i].mode.Load()
	}
	return out
}

// A query's floors raise modes, are shared by reference count, and their
// release leaves every probe as the other layers say.
func TestTapFloorsShareAndRestore(t *testing.T) {
	ps := newProbes(t, "test.example/floors", 4)
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/floors.Fa(..))", Mode: "off"}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddRule(Rule{Pattern: "execution(* test.example/floors.Fd(..))", Mode: "fine"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { SetRules(nil) })
	before := modesOf(ps)
	if want := []uint32{modeOff, modeCoarse, modeCoarse, modeFine}; !equalModes(before, want) {
		t.Fatalf("modes before: %v, want %v", before, want)
	}
	a, err := Acquire(map[uint32]TapNeed{ps[0].id: {}, ps[1].id: {Fine: true}, ps[3].id: {}}, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire(map[uint32]TapNeed{ps[1].id: {Fine: true}}, 16, false)
	if err != nil {
		t.Fatal(err)
	}
	// Fa off → coarse (floor), Fb coarse → fine, Fc untouched, Fd stays fine
	// (a coarse floor never lowers).
	if got, want := modesOf(ps), []uint32{modeCoarse, modeFine, modeCoarse, modeFine}; !equalModes(got, want) {
		t.Fatalf("modes with two queries: %v, want %v", got, want)
	}
	a.Release()
	if got, want := modesOf(ps), []uint32{modeOff, modeFine, modeCoarse, modeFine}; !equalModes(got, want) {
		t.Fatalf("modes after releasing one query: %v, want %v (the other still needs Fb fine)", got, want)
	}
	a.Release() // harmless
	b.Release()
	if got := modesOf(ps); !equalModes(got, before) {
		t.Fatalf("modes after releasing both: %v, want %v as before", got, before)
	}
	if f := Floors(); len(f) != 0 {
		t.Fatalf("floors left: %v", f)
	}
	if ps[0].taps.Load() != nil || ps[1].taps.Load() != nil {
		t.Fatal("taps left on the probes")
	}
}

func equalModes(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAcquireUnknownProbeChangesNothing(t *testing.T) {
	ps := newProbes(t, "test.example/unknown", 1)
	before := modesOf(ps)
	if _, err := Acquire(map[uint32]TapNeed{ps[0].id: {Fine: true}, 1 << 30: {}}, 8, true); err == nil {
		t.Fatal("acquired a probe that does not exist")
	}
	if got := modesOf(ps); !equalModes(got, before) || ps[0].taps.Load() != nil {
		t.Fatalf("a refused acquisition changed probes: %v, want %v", got, before)
	}
	if _, err := Acquire(nil, 0, true); err == nil {
		t.Fatal("a queue of 0 calls was accepted")
	}
}

// Pushed-down predicates decide at the exit: only the calls they admit are
// produced, and a full queue counts exactly what it drops.
func TestTapPushdownAndLoss(t *testing.T) {
	ps := newProbes(t, "test.example/tap", 2)
	boom := errors.New("boom")
	errs, err := Acquire(map[uint32]TapNeed{ps[0].id: {Require: TupleError}}, 64, true)
	if err != nil {
		t.Fatal(err)
	}
	defer errs.Release()
	slow, err := Acquire(map[uint32]TapNeed{ps[0].id: {MinNs: int64(time.Hour)}, ps[1].id: {MaxNs: int64(time.Hour)}}, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Release()
	for i := 0; i < 10; i++ {
		var e error
		if i%3 == 0 {
			e = boom
		}
		call(&ps[0], e)
		call(&ps[1], nil)
	}
	got := errs.Drain(nil, 0)
	if len(got) != 4 || errs.Lost() != 0 {
		t.Fatalf("error tap: %d calls, %d lost; want the 4 failed calls", len(got), errs.Lost())
	}
	for _, c := range got {
		if c.Probe != ps[0].id || c.Flags&TupleError == 0 || c.End < c.Start || c.Start < wallBase.UnixNano() {
			t.Fatalf("bad tuple %+v", c)
		}
		if c.Flags&TupleTraced != 0 {
			t.Fatalf("a coarse probe delivered trace fields: %+v", c)
		}
	}
	// No call of Fa lasts an hour; all ten of Fb pass the upper bound, into a
	// queue of four.
	got = slow.Drain(nil, 0)
	if len(got) != 4 || slow.Lost() != 6 {
		t.Fatalf("bounded tap: %d calls, %d lost; want 4 and 6", len(got), slow.Lost())
	}
	for _, c := range got {
		if c.Probe != ps[1].id {
			t.Fatalf("the duration bound let a call of probe %d through", c.Probe)
		}
	}
}

func TestTapTraceFields(t *testing.T) {
	ps := newProbes(t, "test.example/tapfine", 2)
	tp, err := Acquire(map[uint32]TapNeed{ps[0].id: {Fine: true}, ps[1].id: {Fine: true}}, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Release()
	func() {
		if c := Enter(&ps[0]); c.On() {
			defer c.Exit(nil)
		}
		call(&ps[1], nil)
	}()
	got := tp.Drain(nil, 0)
	if len(got) != 2 {
		t.Fatalf("%d calls, want 2", len(got))
	}
	inner, outer := got[0], got[1]
	if inner.Probe != ps[1].id || outer.Probe != ps[0].id {
		t.Fatalf("order of exits: %+v", got)
	}
	if inner.Flags&TupleTraced == 0 || inner.Trace != outer.Trace || inner.Depth != 1 || outer.Depth != 0 || inner.Trace == 0 {
		t.Fatalf("trace fields: inner %+v outer %+v", inner, outer)
	}
	if glayout.ok && (inner.GID == 0 || inner.GID != outer.GID) {
		t.Fatalf("goroutine ids: %d and %d", inner.GID, outer.GID)
	}
}

func TestTappedCallAllocatesNothing(t *testing.T) {
	ps := newProbes(t, "test.example/tapalloc", 1)
	tp, err := Acquire(map[uint32]TapNeed{ps[0].id: {}}, 8, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tp.Release()
	if n := testing.AllocsPerRun(1000, func() { call(&ps[0], nil) }); n != 0 {
		t.Fatalf("got %v alloc(s) per tapped call; want 0", n)
	}
}

// Every call of many producers is delivered or counted as lost, while the
// consumer drains and the taps come and go.
func TestTapConcurrent(t *testing.T) {
	ps := newProbes(t, "test.example/tapconc", 1)
	tp, err := Acquire(map[uint32]TapNeed{ps[0].id: {}}, 256, true)
	if err != nil {
		t.Fatal(err)
	}
	const producers, calls = 4, 20000
	var wg sync.WaitGroup
	done := make(chan struct{})
	var delivered int
	go func() {
		var buf []CallTuple
		for {
			buf = tp.Drain(buf[:0], 0)
			delivered += len(buf)
			select {
			case <-done:
				delivered += len(tp.Drain(buf[:0], 0))
				close(done)
				return
			default:
			}
		}
	}()
	var churn sync.WaitGroup
	stop := make(chan struct{})
	churn.Add(1)
	go func() { // other queries come and go on the same probe
		defer churn.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			o, err := Acquire(map[uint32]TapNeed{ps[0].id: {MinNs: 1}}, 2, true)
			if err == nil {
				o.Release()
			}
		}
	}()
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < calls; j++ {
				call(&ps[0], nil)
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	done <- struct{}{}
	<-done
	tp.Release()
	if total := uint64(delivered) + tp.Lost(); total != producers*calls {
		t.Fatalf("delivered %d + lost %d = %d, want %d", delivered, tp.Lost(), total, producers*calls)
	}
}

// The analyzer's choices and the queries' floors combine: the higher mode
// wins, and each layer's removal leaves the other's.
func TestTapFloorsWithAnalyzer(t *testing.T) {
	ps := newProbes(t, "test.example/floorsan", 2)
	t.Cleanup(func() { SetAnalyzerModes(nil, nil) })
	q, err := Acquire(map[uint32]TapNeed{ps[0].id: {}, ps[1].id: {Fine: true}}, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetAnalyzerModes(map[uint32]Mode{ps[0].id: "fine", ps[1].id: "off"}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := modesOf(ps), []uint32{modeFine, modeFine}; !equalModes(got, want) {
		t.Fatalf("analyzer fine over a coarse floor, off under a fine one: %v, want %v", got, want)
	}
	q.Release()
	if got, want := modesOf(ps), []uint32{modeFine, modeOff}; !equalModes(got, want) {
		t.Fatalf("after the query: %v, want the analyzer's %v", got, want)
	}
	SetAnalyzerModes(nil, nil)
	if got, want := modesOf(ps), []uint32{modeCoarse, modeCoarse}; !equalModes(got, want) {
		t.Fatalf("after both: %v, want the configured %v", got, want)
	}
}
