package bench

import (
	"math"
	"slices"
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
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range xs {
		d := float64(x) - mean
		ss += d * d
	}
	s := Stats{
		N:      int64(n),
		Mean:   mean,
		Median: median(xs),
		Min:    xs[0],
		Max:    xs[n-1],
	}
	if n > 1 {
		s.StdDev = math.Sqrt(ss / float64(n-1))
		s.CI95 = critical95(n-1) * s.StdDev / math.Sqrt(float64(n))
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

// tTable holds Student's t_{0.975, df} for df = 1..29.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
}

// critical95 is the two-sided 95 % critical value for a sample with df degrees of
// freedom: Student's t below n = 30, the normal distribution's 1.96 from there
// on (thesis, section 3.4.1).
func critical95(df int) float64 {
	if df >= 1 && df <= len(tTable) {
		return tTable[df-1]
	}
	return 1.96
}

// DiffCI95 is the half-width of the 95 % confidence interval of the difference
// of the means of two independent samples (Welch's standard error).
func DiffCI95(a, b Stats) float64 {
	if a.N < 2 || b.N < 2 {
		return 0
	}
	se := math.Sqrt(a.StdDev*a.StdDev/float64(a.N) + b.StdDev*b.StdDev/float64(b.N))
	return critical95(int(min(a.N, b.N)-1)) * se
}
