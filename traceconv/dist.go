package traceconv

import (
	"math"
	"math/bits"
	"slices"
)

// durDist accumulates durations (ns) for a mean, a maximum and quantiles. The
// first exactMax values are kept, so small populations get exact quantiles;
// after that they are folded into a log-linear histogram whose buckets are at
// most 1/64 of their value wide, so a quantile is then within 1.6 % of the true
// one (HdrHistogram's idea with 7 significant bits). Memory per distribution is
// 2 KiB of exact values, then 8 bytes per bucket up to the largest value's: about
// 8 KiB for durations up to a millisecond, 30 KiB at most.
type durDist struct {
	n          int64
	total, max int64
	exact      []int64  // nil once folded
	hist       []uint64 // by bucket, once folded
}

const exactMax = 256

func (d *durDist) add(v int64) {
	v = max(v, 0)
	d.n++
	d.total += v
	d.max = max(d.max, v)
	if d.hist == nil {
		if len(d.exact) < exactMax {
			d.exact = append(d.exact, v)
			return
		}
		for _, x := range d.exact {
			d.count(x)
		}
		d.exact = nil
	}
	d.count(v)
}

func (d *durDist) count(v int64) {
	i := bucketOf(v)
	if i >= len(d.hist) {
		d.hist = slices.Grow(d.hist, i+1-len(d.hist))[:i+1]
	}
	d.hist[i]++
}

// bucketOf: values below 128 have a bucket each; above, a value with e more bits
// than 7 falls in bucket 64·e + (v >> e), whose width is 2^e ≤ v/64.
func bucketOf(v int64) int {
	u := uint64(v)
	if u < 128 {
		return int(u)
	}
	e := bits.Len64(u) - 7
	return 64*e + int(u>>e)
}

// bucketRange is the inclusive value range of bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < 128 {
		return int64(i), int64(i)
	}
	e := i/64 - 1
	m := uint64(i - 64*e)
	lo64, hi64 := m<<e, (m+1)<<e-1
	if hi64 > math.MaxInt64 {
		hi64 = math.MaxInt64
	}
	return int64(lo64), int64(hi64)
}

func (d *durDist) mean() int64 {
	if d.n == 0 {
		return 0
	}
	return d.total / d.n
}

// quantile returns the nearest-rank q-quantile (0 < q ≤ 1): the smallest value
// with at least q·n values at or below it. From the histogram it is the middle of
// the bucket holding that value, clamped to the maximum.
func (d *durDist) quantile(q float64) int64 {
	if d.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(d.n)))
	rank = min(max(rank, 1), d.n)
	if rank == d.n {
		return d.max
	}
	if d.hist == nil {
		if !slices.IsSorted(d.exact) {
			slices.Sort(d.exact)
		}
		return d.exact[rank-1]
	}
	var seen int64
	for i, c := range d.hist {
		if seen += int64(c); seen >= rank {
			lo, hi := bucketRange(i)
			return min(lo+(hi-lo)/2, d.max)
		}
	}
	return d.max
}
