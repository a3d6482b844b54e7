package dash

import (
	"math"
	"math/bits"
	"slices"
)

// hist is a log-linear histogram of durations (ns): values below 32 have a
// bucket each, larger ones fall into buckets at most 1/16 of their value
// wide, so a quantile read from it is within 3.2 % of the true one
// (HdrHistogram's idea with 5 significant bits). Buckets are allocated up to
// the largest value seen: about 1.7 kB for durations up to a second. The
// first exactMax values are also kept as they are, so the quantiles of a
// function with few calls are exact (as in tigris stats).
type hist struct {
	n      uint64
	max    int64
	counts []uint32
	exact  []int64 // nil once more than exactMax values came
	sorted bool
}

const exactMax = 256

const histSub = 4 // sub-bucket bits: 16 buckets per power of two

func histBucket(v int64) int {
	u := uint64(max(v, 0))
	if u < 2<<histSub {
		return int(u)
	}
	e := bits.Len64(u) - (histSub + 1)
	return e<<histSub + int(u>>e)
}

// histRange is the inclusive value range of bucket i.
func histRange(i int) (lo, hi int64) {
	if i < 2<<histSub {
		return int64(i), int64(i)
	}
	e := i>>histSub - 1
	m := uint64(i - e<<histSub)
	lo64, hi64 := m<<e, (m+1)<<e-1
	return int64(min(lo64, math.MaxInt64)), int64(min(hi64, math.MaxInt64))
}

func (h *hist) add(v int64) {
	i := histBucket(v)
	if i >= len(h.counts) {
		h.counts = slices.Grow(h.counts, i+1-len(h.counts))[:i+1]
	}
	if h.counts[i] < math.MaxUint32 {
		h.counts[i]++
	}
	h.n++
	h.max = max(h.max, v)
	switch {
	case h.n <= exactMax:
		h.exact = append(h.exact, v)
		h.sorted = false
	case h.exact != nil:
		h.exact = nil
	}
}

// finish sorts the exact values once no more come, so that quantile reads
// them without copying.
func (h *hist) finish() {
	if h.exact != nil {
		slices.Sort(h.exact)
		h.sorted = true
	}
}

// quantile is the nearest-rank q-quantile: the middle of the bucket holding
// it, the exact maximum for q = 1.
func (h *hist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	if rank == h.n {
		return float64(h.max)
	}
	if h.exact != nil {
		xs := h.exact
		if !h.sorted {
			xs = slices.Clone(xs) // a copy: readers may share h
			slices.Sort(xs)
		}
		return float64(xs[rank-1])
	}
	var seen uint64
	for i, c := range h.counts {
		if seen += uint64(c); seen >= rank {
			lo, hi := histRange(i)
			return float64(min(lo+(hi-lo)/2, h.max))
		}
	}
	return float64(h.max)
}

// Bin is one bar of a histogram as the page draws it.
type Bin struct {
	Lo, Hi float64 // ns, inclusive
	Count  uint64
}

// bins groups the buckets into at most n bars of equal width on a log
// scale, from the smallest value seen to the largest.
func (h *hist) bins(n int) []Bin {
	first, last := -1, -1
	for i, c := range h.counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return nil
	}
	span := last - first + 1
	per := (span + n - 1) / n
	out := make([]Bin, 0, (span+per-1)/per)
	for i := first; i <= last; i += per {
		j := min(i+per-1, last)
		lo, _ := histRange(i)
		_, hi := histRange(j)
		b := Bin{Lo: float64(lo), Hi: float64(min(hi, h.max))}
		for k := i; k <= j; k++ {
			b.Count += uint64(h.counts[k])
		}
		out = append(out, b)
	}
	return out
}
