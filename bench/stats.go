package bench

import (
	"math"
	"slices"

	"github.com/tigrisgo/tigris/internal/moments"
)

// Stats describe a sample of timings in ns, as the thesis reports them
// (section 3.4, Table 11.1).
type Stats struct {
	N      int64   `json:"n"`
	Mean   float64 `json:"mean"`
	CI95   float64 `json:"ci95"` // half-width of the 95 % confidence interval of the mean
	StdDev float64 `json:"stddev"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	Min    int64   `json:"min"`
	Max    int64   `json:"max"`
}

// Compute returns the statistics of xs, sorting xs in place. The quartiles are
// the medians of the lower and upper half of the sorted sample, the middle value
// excluded when the sample is odd (thesis, section 3.4.2); with one value every
// quantile is that value. An empty sample gives zero Stats.
func Compute(xs []int64) Stats {
	n := len(xs)
	if n == 0 {
		return Stats{}
	}
	slices.Sort(xs)
	m := moments.Of(xs)
	s := Stats{
		N:      int64(n),
		Mean:   m.Mean(),
		CI95:   m.CI95(),
		StdDev: m.StdDev(),
		Median: median(xs),
		Min:    xs[0],
		Max:    xs[n-1],
	}
	if n == 1 {
		s.Q1, s.Q3 = s.Median, s.Median
	} else {
		s.Q1 = median(xs[:n/2])
		s.Q3 = median(xs[(n+1)/2:])
	}
	return s
}

// median of a sorted, non-empty sample.
func median(xs []int64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return float64(xs[n/2])
	}
	return (float64(xs[n/2-1]) + float64(xs[n/2])) / 2
}

// DiffCI95 is the half-width of the 95 % confidence interval of the difference
// of the means of two independent samples (Welch's standard error).
func DiffCI95(a, b Stats) float64 {
	if a.N < 2 || b.N < 2 {
		return 0
	}
	se := math.Sqrt(a.StdDev*a.StdDev/float64(a.N) + b.StdDev*b.StdDev/float64(b.N))
	return moments.Critical95(int(min(a.N, b.N)-1)) * se
}
