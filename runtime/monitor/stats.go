package monitor

import (
	"runtime"
	"sync"

	"github.com/tigrisgo/tigris/runtime/internal/num"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// stripe is one P's share of a probe's coarse statistics. Only the goroutine that
// pinned the P writes it, with plain stores: an atomic store is an XCHG on amd64,
// and three of them per call cost more than the two clock reads they bracket.
// Snapshots read the fields while they may be written. That is a deliberate,
// benign race, kept out of the race detector with go:norace on the two functions
// that touch the fields: aligned 64-bit loads and stores do not tear on 64-bit
// platforms, and a snapshot that sees one call half-applied is fine for
// statistics. (On 32-bit platforms a read may tear; the next snapshot heals it.)
// Padding keeps stripes of different Ps on different cache lines.
type stripe struct {
	n      uint64  // calls
	mean   float64 // Welford mean of duration (ns)
	m2     float64 // Welford sum of squared deviations
	errs   uint64
	panics uint64
	sn     uint64 // calls with a size
	smean  float64
	sm2    float64
}

type paddedStripe struct {
	stripe
	_ [128 - 64]byte
}

// stripes holds one stripe per P plus an overflow stripe under a mutex for Ps
// beyond the count allocated at start (GOMAXPROCS raised later).
type stripes struct {
	per      []paddedStripe
	overMu   sync.Mutex
	overflow stripe
}

var stripeCount = num.Max(runtime.GOMAXPROCS(0), runtime.NumCPU())

func newStripes() *stripes { return &stripes{per: make([]paddedStripe, stripeCount)} }

func (ss *stripes) add(d int64, failed, panicked bool, size int64, hasSize bool) {
	pid := procPin()
	if pid < len(ss.per) {
		ss.per[pid].add(d, failed, panicked, size, hasSize)
		procUnpin()
		return
	}
	procUnpin()
	ss.overMu.Lock()
	ss.overflow.add(d, failed, panicked, size, hasSize)
	ss.overMu.Unlock()
}

//go:norace
func (s *stripe) add(d int64, failed, panicked bool, size int64, hasSize bool) {
	s.n++
	s.mean, s.m2 = welford(s.mean, s.m2, s.n, float64(d))
	if failed {
		s.errs++
	}
	if panicked {
		s.panics++
	}
	if hasSize {
		s.sn++
		s.smean, s.sm2 = welford(s.smean, s.sm2, s.sn, float64(size))
	}
}

// welford folds x into the running mean and m2 after n-1 earlier values.
func welford(mean, m2 float64, n uint64, x float64) (float64, float64) {
	d := x - mean
	mean += d / float64(n)
	return mean, m2 + d*(x-mean)
}

// moments is a mergeable (count, mean, M2) triple (Chan et al.'s parallel variance).
type moments struct {
	N    float64
	Mean float64
	M2   float64
}

func (a moments) merge(b moments) moments {
	if a.N == 0 {
		return b
	}
	if b.N == 0 {
		return a
	}
	n := a.N + b.N
	d := b.Mean - a.Mean
	return moments{N: n, Mean: a.Mean + d*b.N/n, M2: a.M2 + b.M2 + d*d*a.N*b.N/n}
}

// minus removes an earlier part b from a total a: the moments of the calls that came
// after b was taken. It is merge solved for the second operand.
func (a moments) minus(b moments) moments {
	n := a.N - b.N
	if n <= 0 || b.N == 0 {
		if n <= 0 {
			return moments{}
		}
		return a
	}
	mean := (a.N*a.Mean - b.N*b.Mean) / n
	d := mean - b.Mean
	m2 := a.M2 - b.M2 - d*d*b.N*n/a.N
	if m2 < 0 {
		m2 = 0 // rounding
	}
	return moments{N: n, Mean: mean, M2: m2}
}

func (m moments) variance() float64 {
	if m.N < 2 {
		return 0
	}
	return m.M2 / (m.N - 1)
}

// totals is the cumulative state of one probe, summed over stripes.
type totals struct {
	time   moments
	size   moments
	errs   uint64
	panics uint64
}

//go:norace
func (s *stripe) load() totals {
	return totals{
		time: moments{N: float64(s.n), Mean: s.mean, M2: s.m2},
		size: moments{N: float64(s.sn), Mean: s.smean, M2: s.sm2},
		errs: s.errs, panics: s.panics,
	}
}

// total sums the stripes, with durations converted from ticks to nanoseconds.
func (ss *stripes) total() totals {
	var t totals
	for i := range ss.per {
		t = t.merge(ss.per[i].load())
	}
	ss.overMu.Lock()
	t = t.merge(ss.overflow.load())
	ss.overMu.Unlock()
	k := writer.NanosPerTick()
	t.time.Mean *= k
	t.time.M2 *= k * k
	return t
}

func (a totals) merge(b totals) totals {
	return totals{time: a.time.merge(b.time), size: a.size.merge(b.size), errs: a.errs + b.errs, panics: a.panics + b.panics}
}

func (a totals) minus(b totals) totals {
	return totals{time: a.time.minus(b.time), size: a.size.minus(b.size), errs: a.errs - num.Min(a.errs, b.errs), panics: a.panics - num.Min(a.panics, b.panics)}
}
