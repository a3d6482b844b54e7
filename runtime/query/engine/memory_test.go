package engine

import (
	"runtime"
	"testing"
)

// TestMemoryCounted: what a runner counts as held (Stats.Memory) is what
// its join buffers and group tables take of the heap, within a factor of
// two either way, for a keyed join that fills, groups with percentiles, and
// windows; and once the windows are out and the buffers evicted, the count
// falls back (to the buffers' capacity, which a join keeps for reuse).
func TestMemoryCounted(t *testing.T) {
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	cases := map[string]string{
		"join": "SELECT a.name, b.name FROM calls AS a WINDOW JOIN calls AS b WINDOW 1h a FOLLOWED BY b " +
			"WHERE a.name = 'Find' AND b.name = 'Save' AND a.line = b.line",
		"groups": "SELECT time, count(*), p99(duration) FROM calls WHERE name = 'Find' GROUP BY time WINDOW 1h",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			p := plan(t, text, Limits{})
			before := heap()
			r := NewRunner(p, func(Row) {})
			const n = 60000
			for i := 0; i < n; i++ {
				// Find and Save alternate, at 1 ms steps; Find's durations
				// vary so that each group's percentile keeps values.
				pr, src := shop[0], 0
				if i%2 == 1 && len(p.Leaves) > 1 {
					pr, src = shop[1], 1
				}
				tu := callAt(pr, float64(i), float64(i%7), 0)
				if name == "groups" {
					tu.Time = ms(float64(i % 3000)) // 3,000 groups, 20 values each
					tu.Call.End = tu.Time
				}
				r.Push(src, tu)
			}
			counted := r.Stats().Memory
			took := heap() - before
			t.Logf("%s: counted %d KB, the heap grew %d KB (%d bytes a tuple counted)", name, counted>>10, took>>10, counted/n)
			if counted <= 0 || took <= 0 || counted > 2*took || took > 2*counted {
				t.Errorf("counted %d bytes held, the heap grew by %d", counted, took)
			}
			r.Finish(0)
			st := r.Stats()
			if st.MemoryPeak < counted {
				t.Errorf("peak %d below the count %d", st.MemoryPeak, counted)
			}
			if st.Memory > counted/2 {
				t.Errorf("after Finish the runner counts %d bytes of %d still held", st.Memory, counted)
			}
			runtime.KeepAlive(r)
		})
	}
}
