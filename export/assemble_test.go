package export

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// simCall is a call of the simulated program, with its true parent.
type simCall struct {
	rec      writer.Record
	parent   int32 // EOI of the nearest recorded ancestor, -1 for none
	recorded bool
}

// simulate runs goroutines that make nested calls and returns the records in
// the order a writer would write them (at exit, goroutines interleaved), each
// with its true parent. Some calls are not recorded (sampled out, as the
// monitor's pieces do): they take no order index but count in the depth.
// longLived makes the first goroutine's root never return.
func simulate(rng *rand.Rand, goroutines, callsPer int, longLived bool) []simCall {
	_, calls, _ := simulateProgram(rng, goroutines, callsPer, longLived, false)
	return calls
}

// TestAssembleParents feeds simulated records to the assembler, with records
// reordered a little (as the per-P queues do) or traces cut for memory at
// random points, and traces held past Hold, and checks that every record becomes exactly
// one span whose parent is its nearest recorded ancestor.
func TestAssembleParents(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*7))
		calls := simulate(rng, 1+rng.IntN(6), 50+rng.IntN(300), seed%3 == 0)
		// Half the seeds cut traces for memory at random points (which sends
		// records before they are ripe), the other half reorder records as
		// the writer's per-P queues do.
		shed := seed%2 == 0
		for i := 1; i < len(calls) && !shed; i++ {
			if rng.IntN(10) == 0 {
				calls[i-1], calls[i] = calls[i], calls[i-1]
			}
		}
		want := map[[2]uint64]int32{}
		for _, c := range calls {
			want[[2]uint64{c.rec.Trace, uint64(c.rec.EOI)}] = c.parent
		}
		got := map[[2]uint64]int32{}
		var stats Stats
		h := &writer.Header{Stream: 42}
		st := newStream(h, nil)
		a := assembler{hold: time.Second, window: 64, wait: time.Hour, stats: &stats,
			emit: func(_ *stream, spans []spanItem) {
				for _, s := range spans {
					k := [2]uint64{s.rec.Trace, uint64(s.rec.EOI)}
					if _, dup := got[k]; dup {
						t.Fatalf("seed %d: record %v sent twice", seed, k)
					}
					p := int32(-1)
					if s.hasParent {
						p = int32(s.parent)
					}
					got[k] = p
				}
			}}
		items := make([]simItem, len(calls))
		for i := range calls {
			items[i].rec = calls[i].rec
		}
		drive(rng, &a, st, items, true, shed)
		if a.open != 0 {
			t.Errorf("seed %d: %d records still held after the end", seed, a.open)
		}
		if len(got) != len(want) {
			t.Errorf("seed %d: %d spans for %d records", seed, len(got), len(want))
		}
		for k, p := range want {
			if g, ok := got[k]; ok && g != p {
				t.Errorf("seed %d: trace %d eoi %d: parent %d, want %d", seed, k[0], k[1], g, p)
			}
		}
		if stats.LateRecords != 0 {
			t.Errorf("seed %d: %d late records", seed, stats.LateRecords)
		}
	}
}

// drive feeds items to a, with every open trace past Hold now and then
// (expire) and traces cut for memory at random points (shed), then ends the
// stream.
func drive(rng *rand.Rand, a *assembler, st *stream, items []simItem, expire, shed bool) {
	now := time.Unix(0, 0)
	for i := range items {
		feed(a, st, &items[i], now)
		if expire && rng.IntN(50) == 0 {
			now = now.Add(2 * time.Second)
			a.expire(st, now)
		}
		if shed && rng.IntN(80) == 0 {
			a.shed([]*stream{st}, int64(rng.IntN(5)))
		}
		a.tick(st, now)
	}
	st.ended = true
	a.expire(st, now)
	a.tick(st, now)
	a.endLinks(st)
}

// TestAssembleLateRecord: a record written after its trace was sent (beyond
// the settling window) still becomes a span, counted as late.
func TestAssembleLateRecord(t *testing.T) {
	var stats Stats
	var spans []spanItem
	st := newStream(&writer.Header{Stream: 1}, nil)
	a := assembler{hold: time.Hour, window: 1, wait: time.Hour, stats: &stats,
		emit: func(_ *stream, s []spanItem) { spans = append(spans, s...) }}
	now := time.Now()
	child := writer.Record{Trace: 5, EOI: 1, ESS: 1, TIn: 2, TOut: 3}
	root := writer.Record{Trace: 5, EOI: 0, ESS: 0, TIn: 1, TOut: 4}
	other := writer.Record{Trace: 6, EOI: 0, ESS: 0, TIn: 5, TOut: 6}
	a.add(st, &root, now)
	a.add(st, &other, now)
	a.tick(st, now)
	a.add(st, &child, now)
	a.tick(st, now)
	if len(spans) != 3 || stats.LateRecords != 1 {
		t.Fatalf("got %d spans, %d late; want 3, 1", len(spans), stats.LateRecords)
	}
	if s := spans[1]; s.rec.Trace != 5 || s.rec.EOI != 1 || s.hasParent || s.missing != 1 {
		t.Errorf("late span %+v: want trace 5's call 1, no parent, one missing level", s)
	}
}

// TestHolesBounded: order indexes far apart in a trace still running (records
// lost, or a damaged index) cost no more memory than the holes kept.
func TestHolesBounded(t *testing.T) {
	var stats Stats
	sent := 0
	st := newStream(&writer.Header{Stream: 1}, nil)
	st.caughtUp = true
	a := assembler{hold: time.Second, window: 0, wait: time.Hour, stats: &stats,
		emit: func(_ *stream, s []spanItem) { sent += len(s) }}
	now := time.Unix(0, 0)
	const jump = 50_000_000
	a.add(st, &writer.Record{Trace: 7, EOI: 3, ESS: 2, TIn: 2, TOut: 3}, now)
	a.add(st, &writer.Record{Trace: 7, EOI: jump, ESS: 1, TIn: 4, TOut: 5}, now)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	now = now.Add(2 * time.Second)
	a.tick(st, now)
	a.expire(st, now)
	runtime.ReadMemStats(&after)
	if sent != 2 {
		t.Fatalf("%d spans sent of 2", sent)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("a partial flush over a gap of %d order indexes allocated %d MB", jump, got>>20)
	}
	if tr := st.traces[7]; tr == nil || len(tr.holes) != maxHoles || tr.holes[len(tr.holes)-1] != jump-1 {
		t.Errorf("holes kept: %v", st.traces[7])
	}
}
