package bench

import "math"

// Helpers for experiments whose sample is one number per run, such as the
// throughput of a service under load (tigris bench --workload petclinic).

// MeanCI95 returns the mean of xs, the half-width of its 95 % confidence
// interval (Student's t with len(xs)-1 degrees of freedom below 30 values, 1.96
// from there on) and the sample standard deviation. With fewer than two values
// the interval and the deviation are 0; with none the mean is NaN.
func MeanCI95(xs []float64) (mean, ci, sd float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd = math.Sqrt(ss / float64(n-1))
	return mean, critical95(n-1) * sd / math.Sqrt(float64(n)), sd
}

// RatioCI95 is the ratio a/b of two independent means with the half-width of
// its 95 % confidence interval to first order (the delta method: the relative
// half-widths add in quadrature). It is 0 when either half-width is 0 and NaN
// when b is 0.
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

// MachineEnvironment describes this machine and the go command's toolchain,
// as every Results of a plan does.
func MachineEnvironment() Environment { return environment() }
