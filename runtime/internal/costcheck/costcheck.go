package costcheck

import (
	"runtime"
	"testing"
)

// Cost is what a call allocated.
type Cost struct {
	Bytes  uint64 // runtime.MemStats.TotalAlloc
	Allocs uint64 // runtime.MemStats.Mallocs
}

// Of runs f and returns what the process allocated meanwhile. Other
// goroutines' allocations count too: do not measure in parallel tests.
func Of(f func()) Cost {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return Cost{Bytes: m1.TotalAlloc - m0.TotalAlloc, Allocs: m1.Mallocs - m0.Mallocs}
}

// Bound is a linear bound on the cost of an input: Fixed, plus PerByte for
// each input byte.
type Bound struct {
	Fixed, PerByte Cost
}

// Limit is the bound's allowance for an input of n bytes (in a race-detector
// build, raceFactor times it).
func (b Bound) Limit(n int) Cost {
	return Cost{
		Bytes:  raceFactor * (b.Fixed.Bytes + b.PerByte.Bytes*uint64(n)),
		Allocs: raceFactor * (b.Fixed.Allocs + b.PerByte.Allocs*uint64(n)),
	}
}

// Allowance is a fixed allowance of n bytes or allocations for a test's own
// comparison: n, or raceFactor times n in a race-detector build.
func Allowance(n uint64) uint64 { return raceFactor * n }

// Check runs f on an input of n bytes and fails t when its cost exceeds the
// bound.
func (b Bound) Check(t testing.TB, n int, f func()) {
	t.Helper()
	c, limit := Of(f), b.Limit(n)
	if c.Bytes > limit.Bytes || c.Allocs > limit.Allocs {
		t.Errorf("an input of %d bytes cost %d bytes in %d allocations; the bound is %d bytes in %d allocations", n, c.Bytes, c.Allocs, limit.Bytes, limit.Allocs)
	}
}

// Linear fails t unless f's cost grows linearly with its input: it runs f on
// gen(n) and on gen(k·n) and compares the cost per input byte, which a
// linear cost keeps (up to the fixed part, and the logarithm of a sort) and
// a quadratic one multiplies by k. f runs once before, so that what is built
// on first use is not counted. gen's inputs must grow with n.
func Linear(t testing.TB, gen func(n int) []byte, f func([]byte), n, k int) {
	t.Helper()
	const slack = 2.5
	small, large := gen(n), gen(k*n)
	if 2*len(large) < k*len(small) {
		t.Fatalf("gen(%d) is %d bytes and gen(%d) %d: the input does not grow", n, len(small), k*n, len(large))
	}
	f(small)
	cs, cl := Of(func() { f(small) }), Of(func() { f(large) })
	per := func(c uint64, in []byte) float64 { return float64(c) / float64(len(in)) }
	t.Logf("%d bytes: %d bytes allocated in %d allocations; %d bytes: %d in %d", len(small), cs.Bytes, cs.Allocs, len(large), cl.Bytes, cl.Allocs)
	if a, b := per(cs.Bytes, small), per(cl.Bytes, large); b > slack*a && cl.Bytes > 1<<20 {
		t.Errorf("bytes allocated per input byte grew from %.1f to %.1f as the input grew %d-fold: not linear", a, b, k)
	}
	if a, b := per(cs.Allocs, small), per(cl.Allocs, large); b > slack*a && cl.Allocs > 1<<12 {
		t.Errorf("allocations per input byte grew from %.3f to %.3f as the input grew %d-fold: not linear", a, b, k)
	}
}
