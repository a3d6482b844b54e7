package monitor

import (
	"sync"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// goLinked starts f as the rewriter's code starts a goroutine from a go
// statement in the function of probe p (link.go), and waits for it.
func goLinked(p *Probe, f func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	run := func() { defer wg.Done(); f() }
	if l := Fork(p); !l.On() {
		go run()
	} else {
		go goWrapper(l, run)
	}
	wg.Wait()
}

func goWrapper(l Link, f func()) { l.Adopt(); f() }

// traced runs f inside a call of probe p and returns the call's goroutine id.
func traced(p *Probe, f func()) {
	c := Enter(p)
	defer c.Exit(nil)
	f()
}

// links returns the sink's link records, unpacked, and its call records.
func (s *recordSink) split() (links []writer.Link, calls []writer.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.records {
		if l, ok := s.records[i].Link(); ok {
			links = append(links, l)
		} else {
			calls = append(calls, s.records[i])
		}
	}
	return links, calls
}

// TestGoStatementLinked: a goroutine started inside a recorded trace begins a
// trace of its own, and its link names the parent trace, goroutine and
// position (the go statement ran inside the parent's second call, at depth 2,
// after two calls had started), the function whose go statement it was, and
// comes before the child's records.
func TestGoStatementLinked(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/links", 3)
	var parentG, childG uint64
	traced(&ps[0], func() { // eoi 0, ess 0
		parentG = context().goid
		traced(&ps[1], func() { // eoi 1, ess 1: runs the go statement
			goLinked(&ps[1], func() {
				childG = context().goid
				call(&ps[2], nil) // the child's first trace
			})
		})
	})
	links, calls := sink.split()
	if len(links) != 1 || len(calls) != 3 {
		t.Fatalf("%d links and %d calls recorded; want 1 and 3", len(links), len(calls))
	}
	l := links[0]
	var parent, child writer.Record
	for _, r := range calls {
		switch r.Probe {
		case ps[0].ID():
			parent = r
		case ps[2].ID():
			child = r
		}
	}
	want := writer.Link{
		Trace: child.Trace, GID: childG, Parent: parent.Trace, ParentGID: parentG,
		EOI: 2, ESS: 2, Probe: ps[1].ID(), Time: l.Time,
	}
	if l != want || child.Trace == parent.Trace || childG == parentG {
		t.Fatalf("link %+v\nwant %+v (child trace %d, parent trace %d)", l, want, child.Trace, parent.Trace)
	}
	if l.Time < parent.TIn || l.Time > child.TIn {
		t.Fatalf("go statement at %d, outside [%d, %d]", l.Time, parent.TIn, child.TIn)
	}
	sink.mu.Lock()
	first := sink.records[0]
	sink.mu.Unlock()
	if _, ok := first.Link(); !ok {
		t.Fatalf("the first record is %+v, not the link: the link must precede the child's records", first)
	}
	if len(sink.defs) == 0 {
		t.Fatal("no probe definitions")
	}
	// The child's tree hangs under the parent's call that ran the go statement.
	var b writer.TraceBuilder
	for i := range calls {
		b.Add(&calls[i])
	}
	b.AddLink(&l)
	ts := b.Traces()
	if n := ts[0].LinkedFrom(ts[1].Link); n == nil || n.Record.Probe != ps[1].ID() {
		t.Fatalf("linked from %+v, want the call of probe %d", n, ps[1].ID())
	}
}

// TestLinkedTraceFollowsParentSampling: a linked trace is recorded exactly when
// its parent's trace is, whatever the rate when the child starts; only the
// goroutine's first trace follows the parent, later ones draw anew.
func TestLinkedTraceFollowsParentSampling(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/linksampling", 3)
	setThreshold(t, 0)
	traced(&ps[0], func() { // not recorded
		setThreshold(t, 1)
		goLinked(&ps[0], func() { call(&ps[1], nil) }) // follows: not recorded
	})
	if links, calls := sink.split(); len(links)+len(calls) != 0 {
		t.Fatalf("an unrecorded trace's goroutine was recorded: %d links, %d calls", len(links), len(calls))
	}
	traced(&ps[0], func() { // rate 1: recorded
		setThreshold(t, 0)
		goLinked(&ps[0], func() {
			call(&ps[1], nil) // follows the parent: recorded
			call(&ps[2], nil) // the goroutine's second trace draws: rate 0
		})
	})
	links, calls := sink.split()
	if len(links) != 1 || len(calls) != 2 {
		t.Fatalf("%d links, %d calls; want 1 link, the parent's call and the child's first", len(links), len(calls))
	}
	for _, r := range calls {
		if r.Probe == ps[2].ID() {
			t.Fatal("the goroutine's second trace followed the link; it must draw anew")
		}
	}
}

// TestNoLinkOutsideTraces: a go statement outside any fine trace runs as
// written (the zero Link), and a link adopted by a goroutine that never makes
// a fine call dies with it: no later goroutine, on a reused g, takes it.
func TestNoLinkOutsideTraces(t *testing.T) {
	ps, sink := fineProbes(t, "test.example/nolinks", 2)
	if l := Fork(&ps[0]); l.On() {
		t.Fatalf("Fork outside a trace: %+v", l)
	}
	for i := 0; i < 50; i++ {
		traced(&ps[0], func() {
			goLinked(&ps[0], func() {}) // adopts, never traces
		})
		goLinked(&ps[0], func() { call(&ps[1], nil) }) // no link: a trace of its own
	}
	links, calls := sink.split()
	if len(links) != 0 || len(calls) != 100 {
		t.Fatalf("%d links, %d calls; want none and 100", len(links), len(calls))
	}
}

// goBatch is how many goroutines BenchmarkGoStatement starts before it waits
// for them: few enough that their stacks stay in cache.
const goBatch = 64

// BenchmarkFork measures the parent's side alone: Fork in a program that has
// never traced, outside a trace (a context lookup), and inside a recorded one
// (and a clock read and the position's 48 bytes).
func BenchmarkFork(b *testing.B) {
	ps, _ := fineProbes(b, "test.example/benchfork", 1)
	SetSink(&writer.Null{})
	var on int
	loop := func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if l := Fork(&ps[0]); l.On() {
				on++
			}
		}
	}
	b.Run("no-trace", func(b *testing.B) {
		saved := lastTrace.Load()
		lastTrace.Store(0)
		defer lastTrace.Store(saved)
		loop(b)
	})
	b.Run("outside-trace", func(b *testing.B) {
		traced(&ps[0], func() {}) // the program has traced
		loop(b)
	})
	b.Run("in-trace", func(b *testing.B) { traced(&ps[0], func() { loop(b) }) })
}

// BenchmarkGoStatement measures what the rewritten go statement costs per
// goroutine started, the goroutine's own start and end and a WaitGroup
// included. "plain" is a go statement as written; "no-trace" the rewritten
// one in a program that has never started a fine trace (Fork is an atomic
// load); "outside-trace" in a program that traces, but not on this goroutine
// (Fork looks up the goroutine's context); "unrecorded" inside an unsampled
// trace (the child starts through the wrapper and adopts the link); the
// children of these four make no fine call. "plain-traced-child" is a plain go
// statement whose child makes one recorded fine call, and "recorded" the
// rewritten one inside a recorded trace, whose child's call is recorded with
// its link.
func BenchmarkGoStatement(b *testing.B) {
	ps, _ := fineProbes(b, "test.example/benchgo", 2)
	SetSink(&writer.Null{})
	var wg sync.WaitGroup
	done := func() { wg.Done() }
	child := func() { call(&ps[1], nil); wg.Done() }
	rewritten := func(b *testing.B, f func(), inTrace bool) {
		b.ReportAllocs()
		body := func() {
			for i := 0; i < b.N; i++ {
				wg.Add(1)
				if l := Fork(&ps[0]); !l.On() {
					go f()
				} else {
					go goWrapper(l, f)
				}
				if i%goBatch == goBatch-1 {
					wg.Wait()
				}
			}
			wg.Wait()
		}
		if inTrace {
			traced(&ps[0], body)
		} else {
			body()
		}
	}
	plain := func(b *testing.B, f func()) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			wg.Add(1)
			go f()
			if i%goBatch == goBatch-1 {
				wg.Wait()
			}
		}
		wg.Wait()
	}
	b.Run("plain", func(b *testing.B) { plain(b, done) })
	b.Run("no-trace", func(b *testing.B) {
		saved := lastTrace.Load()
		lastTrace.Store(0)
		defer lastTrace.Store(saved)
		rewritten(b, done, false)
	})
	b.Run("outside-trace", func(b *testing.B) {
		traced(&ps[0], func() {}) // the program has traced
		rewritten(b, done, false)
	})
	b.Run("unrecorded", func(b *testing.B) {
		setThreshold(b, 0)
		rewritten(b, done, true)
	})
	b.Run("plain-traced-child", func(b *testing.B) {
		setThreshold(b, 1)
		plain(b, child)
	})
	b.Run("recorded", func(b *testing.B) {
		setThreshold(b, 1)
		rewritten(b, child, true)
	})
}
