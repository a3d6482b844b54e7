package moments

import (
	"math"
	"math/rand/v2"
	"slices"
)

// BootstrapResamples is the number of resamples MedianCI95, RatioOfMediansCI95
// and PairedRatioCI95 draw: enough that the 2.5 % and 97.5 % quantiles of the
// resampled medians move by less than a tenth of the interval from one seed to
// another.
const BootstrapResamples = 4000

// MedianCI95 is the median of xs with its 95 % percentile-bootstrap
// confidence interval [lo, hi]: the 2.5 % and 97.5 % quantiles of the medians
// of BootstrapResamples resamples of xs drawn with replacement, from a
// generator seeded with seed (the same seed gives the same interval). With
// fewer than two values the interval is the median itself; with none all
// three are NaN. xs is not changed.
func MedianCI95(xs []float64, seed uint64) (median, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	median = Median(xs)
	if len(xs) < 2 {
		return median, median, median
	}
	lo, hi = quantiles95(resampledMedians(xs, seed))
	return median, lo, hi
}

// RatioOfMediansCI95 is median(a)/median(b) with its 95 % percentile-bootstrap
// interval, a and b resampled independently (two samples of independent runs,
// e.g. a configuration's and the baseline's). The values are NaN when either
// sample is empty or b's median is 0; with fewer than two values in either the
// interval is the ratio itself.
func RatioOfMediansCI95(a, b []float64, seed uint64) (ratio, lo, hi float64) {
	if len(a) == 0 || len(b) == 0 || Median(b) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ratio = Median(a) / Median(b)
	if len(a) < 2 || len(b) < 2 {
		return ratio, ratio, ratio
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	ratios := make([]float64, 0, BootstrapResamples)
	bufA, bufB := make([]float64, len(a)), make([]float64, len(b))
	for range BootstrapResamples {
		if d := resampledMedian(b, bufB, rng); d != 0 {
			ratios = append(ratios, resampledMedian(a, bufA, rng)/d)
		}
	}
	lo, hi = quantiles95(ratios)
	return ratio, lo, hi
}

// PairedRatioCI95 is the ratio of a to b paired by index (a[i] and b[i]
// measured together, e.g. in the same round of interleaved runs): the median
// over the pairs of log(a[i]/b[i]), exponentiated, with its 95 %
// percentile-bootstrap interval, the pairs resampled together. An effect the
// pair shares (a slow round) cancels in each pair's ratio, where
// RatioOfMediansCI95 counts it twice as noise. Pairs beyond the shorter slice
// and pairs with a value that is not positive are left out; n is the number
// of pairs used. Without pairs the values are NaN; with one the interval is
// the ratio itself.
func PairedRatioCI95(a, b []float64, seed uint64) (ratio, lo, hi float64, n int) {
	var logs []float64
	for i := range min(len(a), len(b)) {
		if a[i] > 0 && b[i] > 0 {
			logs = append(logs, math.Log(a[i]/b[i]))
		}
	}
	if len(logs) == 0 {
		return math.NaN(), math.NaN(), math.NaN(), 0
	}
	ratio = math.Exp(Median(logs))
	if len(logs) < 2 {
		return ratio, ratio, ratio, len(logs)
	}
	lo, hi = quantiles95(resampledMedians(logs, seed))
	return ratio, math.Exp(lo), math.Exp(hi), len(logs)
}

// resampledMedians are the medians of BootstrapResamples resamples of xs
// drawn with replacement, from a generator seeded with seed.
func resampledMedians(xs []float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	meds := make([]float64, BootstrapResamples)
	buf := make([]float64, len(xs))
	for i := range meds {
		meds[i] = resampledMedian(xs, buf, rng)
	}
	return meds
}

// resampledMedian draws len(xs) values of xs with replacement into buf and
// returns their median.
func resampledMedian(xs, buf []float64, rng *rand.Rand) float64 {
	for i := range buf {
		buf[i] = xs[rng.IntN(len(xs))]
	}
	slices.Sort(buf)
	n := len(buf)
	if n%2 == 1 {
		return buf[n/2]
	}
	return (buf[n/2-1] + buf[n/2]) / 2
}

// quantiles95 are the 2.5 % and 97.5 % quantiles of xs (sorted in place), by
// linear interpolation between order statistics.
func quantiles95(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(xs)
	q := func(p float64) float64 {
		pos := p * float64(len(xs)-1)
		i := int(pos)
		if i+1 >= len(xs) {
			return xs[len(xs)-1]
		}
		return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
	}
	return q(0.025), q(0.975)
}
