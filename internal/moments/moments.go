package moments

import (
	"math"
	"slices"
)

// Moments accumulates the count, mean and sum of squared deviations of the
// values added so far. The zero value is an empty accumulator.
type Moments struct {
	n    int64
	mean float64
	m2   float64 // sum of squared deviations from the mean
}

// Of returns the moments of xs.
func Of[T int64 | float64](xs []T) Moments {
	var m Moments
	for _, x := range xs {
		m.Add(float64(x))
	}
	return m
}

// Add folds x in.
func (m *Moments) Add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / float64(m.n)
	m.m2 += d * (x - m.mean)
}

// N is the number of values added.
func (m Moments) N() int64 { return m.n }

// Mean is the mean of the values, 0 when there are none.
func (m Moments) Mean() float64 { return m.mean }

// Variance is the sample variance (divided by n−1), 0 below two values.
func (m Moments) Variance() float64 {
	if m.n < 2 {
		return 0
	}
	return m.m2 / float64(m.n-1)
}

// StdDev is the sample standard deviation, 0 below two values.
func (m Moments) StdDev() float64 { return math.Sqrt(m.Variance()) }

// CI95 is the half-width of the 95 % confidence interval of the mean:
// [Critical95] for n−1 degrees of freedom times the standard error; 0 below two
// values.
func (m Moments) CI95() float64 {
	if m.n < 2 {
		return 0
	}
	return Critical95(int(min(m.n-1, math.MaxInt32))) * m.StdDev() / math.Sqrt(float64(m.n))
}

// tTable holds Student's t_{0.975, df} for df = 1..29.
var tTable = [...]float64{
	12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
}

// Critical95 is the two-sided 95 % critical value for a sample with df degrees
// of freedom: Student's t below 30 values, the normal distribution's 1.96 from
// there on (as the MooBench thesis does, section 3.4.1).
func Critical95(df int) float64 {
	if df >= 1 && df <= len(tTable) {
		return tTable[df-1]
	}
	return 1.96
}

// RatioCI95 is the ratio a/b of two independent means with the half-width of
// its 95 % confidence interval to first order (the delta method: the relative
// half-widths add in quadrature). The half-width is 0 when either input's is 0;
// the ratio is NaN when b is 0.
func RatioCI95(a, aCI, b, bCI float64) (ratio, ci float64) {
	if b == 0 {
		return math.NaN(), 0
	}
	ratio = a / b
	if aCI == 0 || bCI == 0 || a == 0 {
		return ratio, 0
	}
	return ratio, math.Abs(ratio) * math.Hypot(aCI/a, bCI/b)
}

// Median is the median of xs (the mean of the two middle values when their
// number is even), 0 for none. xs is not changed.
func Median[T int64 | float64](xs []T) float64 {
	if len(xs) == 0 {
		return 0
	}
	c := slices.Clone(xs)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return float64(c[n/2])
	}
	return (float64(c[n/2-1]) + float64(c[n/2])) / 2
}
