package engine

import (
	"testing"
)

// A stop cuts a join's pairing short within stopEvery pairs, and a window's
// emission within stopEvery groups; Stats.Abandoned counts the cuts.
func TestStopCutsLongLoopsShort(t *testing.T) {
	p := plan(t, `SELECT a.line, count(*) FROM calls AS a WINDOW JOIN calls AS b WINDOW 1h GROUP BY a.line, b.line WINDOW 1h`, Limits{})
	rows := 0
	r := NewRunner(p, func(Row) { rows++ })
	for i := 0; i < 5000; i++ {
		r.Push(1, callAt(shop[i%4], float64(i), 0, 0))
	}
	asked := 0
	stop := false
	r.SetStop(func() bool { asked++; return stop })
	r.Push(0, callAt(shop[0], 5000, 0, 0))
	// A step is a pair tried, and a pair folded into its window.
	if st := r.Stats(); asked != 2*5000/stopEvery || st.Abandoned != 0 {
		t.Fatalf("asked %d times, abandoned %d, for 5000 pairs", asked, st.Abandoned)
	}
	stop = true
	asked = 0
	r.Push(0, callAt(shop[1], 5001, 0, 0))
	if st := r.Stats(); asked < 1 || asked > 2 || st.Abandoned != uint64(asked) {
		t.Fatalf("a stop asked %d times, abandoned %d", asked, st.Abandoned)
	}
	r.Finish(at + ms(1e7))
	if rows != 0 || r.Stats().Abandoned < 2 {
		t.Fatalf("%d rows after a stop, %d abandoned", rows, r.Stats().Abandoned)
	}
	stop = false
	r.Finish(at + ms(1e7)) // nothing left: the windows were closed
	if rows != 0 {
		t.Fatalf("%d rows", rows)
	}
}
