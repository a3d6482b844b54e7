package query

import (
	"errors"
	"runtime"
	"testing"
)

// TestCompileStopsWithinBoundedWork: a compile asked to stop, at any point
// of a long text of every kind (lexing, parsing, checking), gives up with
// ErrStopped after a bounded amount of work: at most stopEvery units
// (tokens, checkpoints, operands) pass between two looks at the stop
// function, and what it allocates once stopped (the parser unwinding its
// statement) is at most a tenth of what the whole compile does. Work is
// counted, not timed.
func TestCompileStopsWithinBoundedWork(t *testing.T) {
	mallocs := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.Mallocs
	}
	// The bound is per unit of work, whatever the length: an eighth of the
	// longest text spares the machine (and the race detector).
	for _, name := range []string{"sum", "product", "and", "in", "stream"} {
		chain := chains[name]
		n := 1000
		for len(chain(2*n)) <= MaxText/8 {
			n *= 2
		}
		text := chain(n)
		looks := 0
		full := &stopper{stop: func() bool { looks++; return false }}
		m0 := mallocs()
		if _, err := compile(text, nil, full); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		whole := mallocs() - m0
		if looks < full.n/stopEvery {
			t.Fatalf("%s: %d looks at the stop function for %d units of work", name, looks, full.n)
		}
		// A stop asked for once a share of the compile's allocations are
		// made lands at the next look: what is allocated past the share
		// is the work done after the stop was asked for.
		for _, share := range []uint64{10, 50, 90} {
			asked := whole * share / 100
			var m1 uint64
			st := &stopper{stop: func() bool { return mallocs()-m1 >= asked }}
			m1 = mallocs()
			_, err := compile(text, nil, st)
			after := mallocs() - m1 - asked
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("%s stopped at %d%%: %v", name, share, err)
			}
			if st.after > 2*MaxNesting || after > whole/10 {
				t.Errorf("%s stopped at %d%% of its allocations: %d units of work and %d allocations (of the compile's %d) after the stop", name, share, st.after, after, whole)
			}
		}
		t.Logf("%s: %d bytes, %d units of work, %d looks, %d allocations", name, len(text), full.n, looks, whole)
	}
}
