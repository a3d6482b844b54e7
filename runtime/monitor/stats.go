package monitor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

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
	n      uint64 // calls timed
	time   shifted
	errs   uint64
	panics uint64
	sn     uint64 // calls with a size
	size   shifted
	// untimed counts the calls a coarse probe timed one in N of (phase 1's
	// sampling: sampling.go) left untimed, estimated as N-1 for every call
	// it timed; untimedErrs and untimedPanics likewise. Estimated totals are
	// n+untimed, errs+untimedErrs; durations are the timed calls'.
	untimed, untimedErrs, untimedPanics uint64
}

// shifted accumulates values as sums of their differences to the first one
// (the "shifted data" variance algorithm): an add is a subtraction, two
// additions and a multiplication, where Welford's update divides, and the
// division's latency was the larger part of a stripe update. Shifting by a
// value of the data keeps the sums small, so the variance does not cancel
// away as with plain sums of squares.
type shifted struct {
	k, sum, sumsq float64
}

//go:norace
func (a *shifted) add(first bool, x float64) {
	if first {
		a.k = x
	}
	x -= a.k
	a.sum += x
	a.sumsq += x * x
}

// moments of n values accumulated in a.
//
//go:norace
func (a *shifted) moments(n uint64) moments {
	if n == 0 {
		return moments{}
	}
	N := float64(n)
	m2 := a.sumsq - a.sum*a.sum/N
	if m2 < 0 {
		m2 = 0 // rounding
	}
	return moments{N: N, Mean: a.k + a.sum/N, M2: m2}
}

type paddedStripe struct {
	stripe
	_ [128 - unsafe.Sizeof(stripe{})]byte
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

// noStats are the statistics of every probe that has not counted a call:
// no stripes, so a call's add takes the slow path (addCall), which gives
// the probe its own. The exits' fast paths test nothing more than they did
// with stripes allocated at registration. Nothing is ever added to noStats.
var noStats stripes

// ownStats gives p statistics of its own at its first call.
func (p *Probe) ownStats() *stripes {
	ss := newStripes()
	if p.stats.CompareAndSwap(&noStats, ss) {
		return ss
	}
	return p.stats.Load() // another P's first call was first
}

// totals are the probe's statistics so far.
func (p *Probe) totals() totals {
	ss := p.stats.Load()
	if ss == nil || ss == &noStats {
		return totals{}
	}
	return ss.total()
}

// callFacts say how a call ended, for addCall.
type callFacts uint8

const (
	callFailed   callFacts = 1 << iota // returned a non-nil error
	callPanicked                       // ended by panicking
	callSized                          // reported a result size
	callRecorded                       // handed a fine record to the sink: counted in fineRecords
)

// addCall folds one call of d ticks into the calling P's stripe, and counts a
// fine record there too, under the same pin: a shared atomic counter would
// cost every fine call a locked instruction that waits for the record's
// stores, and bounce between the CPUs of concurrent producers.
//
// A call timed for others (untimed > 0: a coarse probe timing one in N) also
// counts for the untimed calls it stands for.
//
// The stripe's phase1EarlyCalls-th timed call asks phase 1 for a look soon
// (phase1.go): a function that turns hot late in a program's life is
// looked at then, not at the next scheduled look.
func (p *Probe) addCall(d int64, f callFacts, size int64, untimed uint64) {
	ss := p.stats.Load()
	pid := procPin()
	if pid < len(ss.per) {
		st := &ss.per[pid].stripe
		st.addTime(d) // add, written out
		st.addFacts(f, size)
		if untimed != 0 {
			st.addUntimed(untimed, f)
		}
		if f&callRecorded != 0 {
			fineRecords.addPinned(pid)
		}
		early := st.n == phase1EarlyCalls
		procUnpin()
		if early {
			phase1Soon()
		}
		return
	}
	procUnpin()
	if ss == &noStats {
		p.ownStats()
		p.addCall(d, f, size, untimed)
		return
	}
	ss.overMu.Lock()
	ss.overflow.add(d, f, size)
	ss.overflow.addUntimed(untimed, f)
	ss.overMu.Unlock()
	if f&callRecorded != 0 {
		fineRecords.over.Add(1)
	}
}

//go:norace
func (s *stripe) add(d int64, f callFacts, size int64) {
	s.addTime(d)
	s.addFacts(f, size)
}

// addTime and addFacts are add in two parts, each small enough to inline
// into the exits (add is not): a call there would cost the spilling of
// every live register.
//
//go:norace
func (s *stripe) addTime(d int64) {
	s.time.add(s.n == 0, float64(d))
	s.n++
}

//go:norace
func (s *stripe) addFacts(f callFacts, size int64) {
	s.errs += uint64(f & callFailed)
	s.panics += uint64(f&callPanicked) >> 1 // callPanicked is bit 1
	if f&callSized != 0 {
		s.size.add(s.sn == 0, float64(size))
		s.sn++
	}
}

//go:norace
func (s *stripe) addUntimed(n uint64, f callFacts) {
	s.untimed += n
	s.untimedErrs += n * uint64(f&callFailed)
	s.untimedPanics += n * (uint64(f&callPanicked) >> 1)
}

// pcounter is a counter with one cell per P, written with plain stores by
// the goroutine pinned to the P (like the stripes) and summed when read.
type pcounter struct {
	per  []paddedCount
	over atomic.Uint64 // Ps beyond the cells allocated at start
}

type paddedCount struct {
	n uint64
	_ [120]byte
}

func newPcounter() pcounter { return pcounter{per: make([]paddedCount, stripeCount)} }

//go:norace
func (c *pcounter) addPinned(pid int) { c.per[pid].n++ }

// Load sums the cells (each read may be a call behind: see stripe).
//
//go:norace
func (c *pcounter) Load() uint64 {
	n := c.over.Load()
	for i := range c.per {
		n += c.per[i].n
	}
	return n
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
	// untimed, untimedErrs and untimedPanics: see stripe.
	untimed, untimedErrs, untimedPanics uint64
}

// calls is the number of calls: timed, and estimated for the untimed.
func (t totals) calls() uint64 { return uint64(t.time.N) + t.untimed }

//go:norace
func (s *stripe) load() totals {
	return totals{
		time: s.time.moments(s.n),
		size: s.size.moments(s.sn),
		errs: s.errs, panics: s.panics,
		untimed: s.untimed, untimedErrs: s.untimedErrs, untimedPanics: s.untimedPanics,
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
	return totals{time: a.time.merge(b.time), size: a.size.merge(b.size), errs: a.errs + b.errs, panics: a.panics + b.panics,
		untimed: a.untimed + b.untimed, untimedErrs: a.untimedErrs + b.untimedErrs, untimedPanics: a.untimedPanics + b.untimedPanics}
}

func (a totals) minus(b totals) totals {
	sub := func(x, y uint64) uint64 { return x - num.Min(x, y) }
	return totals{time: a.time.minus(b.time), size: a.size.minus(b.size), errs: sub(a.errs, b.errs), panics: sub(a.panics, b.panics),
		untimed: sub(a.untimed, b.untimed), untimedErrs: sub(a.untimedErrs, b.untimedErrs), untimedPanics: sub(a.untimedPanics, b.untimedPanics)}
}
