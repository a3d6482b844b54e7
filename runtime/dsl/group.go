package dsl

import (
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"math"
	"slices"
)

// Method is the strategy a Partition was built with.
type Method int8

const (
	// MethodNone: there was no finite value to group.
	MethodNone Method = iota
	// MethodConstant: all values are equal (this includes a single value); every
	// value is Plain.
	MethodConstant
	// MethodNormal: the values passed the normality test; the cuts are the mean
	// ± K1 and ± K2 standard deviations.
	MethodNormal
	// MethodQuantiles: the values did not pass (or were too few for) the
	// normality test; the cuts are Q1 and Q3 and the medians of the lower and
	// upper quarters.
	MethodQuantiles
)

// String returns "none", "constant", "normal" or "quantiles".
func (m Method) String() string {
	switch m {
	case MethodNone:
		return "none"
	case MethodConstant:
		return "constant"
	case MethodNormal:
		return "normal"
	case MethodQuantiles:
		return "quantiles"
	}
	return fmt.Sprintf("Method(%d)", int8(m))
}

// MarshalText encodes m as its String.
func (m Method) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes a method as written by MarshalText.
func (m *Method) UnmarshalText(b []byte) error {
	for _, c := range []Method{MethodNone, MethodConstant, MethodNormal, MethodQuantiles} {
		if c.String() == string(b) {
			*m = c
			return nil
		}
	}
	return fmt.Errorf("unknown grouping method %q", b)
}

// Cut is a boundary between two adjacent levels.
type Cut struct {
	// Value is the boundary in the metric's unit.
	Value float64 `json:"value"`
	// Outer says where a value equal to Value goes: to the level farther from
	// Plain when true, to the one nearer Plain when false.
	Outer bool `json:"outer"`
}

// Normality is the outcome of the Lilliefors (Kolmogorov–Smirnov) test.
type Normality struct {
	// Tested is false when the test was not run (fewer than 5 values, or all
	// equal); D and P are then 0.
	Tested bool `json:"tested"`
	// D is the Kolmogorov–Smirnov statistic against the normal distribution
	// with the sample's mean and standard deviation.
	D float64 `json:"d"`
	// P is the Lilliefors p-value of D (Dallal–Wilkinson approximation).
	P float64 `json:"p"`
	// Normal is the decision: tested, at least Options.MinNormal values and
	// P > Options.Alpha.
	Normal bool `json:"normal"`
	// Reason explains the decision in one line.
	Reason string `json:"reason"`
}

// Partition is the grouping of one metric's values into the five levels, in the
// metric's own order: Least holds the lowest values. Evaluate applies the
// metric's direction afterwards. Its floats are always finite.
type Partition struct {
	Method Method `json:"method"`
	// N is the number of values grouped; Excluded the number left out because
	// they were NaN or infinite.
	N        int `json:"n"`
	Excluded int `json:"excluded"`
	// Mean, SD (with n-1) and Median of the grouped values; 0 when N is 0, SD 0
	// when N is 1.
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"`
	Median float64 `json:"median"`
	// Normality is the test that chose between MethodNormal and MethodQuantiles.
	Normality Normality `json:"normality"`
	// Cuts separate Least|Less, Less|Plain, Plain|More and More|Most, in
	// ascending order of Value. For MethodNormal they are mean-K2·sd,
	// mean-K1·sd, mean+K1·sd, mean+K2·sd; for MethodQuantiles the median of the
	// lower quarter, Q1, Q3 and the median of the upper quarter.
	Cuts [4]Cut `json:"cuts"`
	// Counts is the number of grouped values in each level, Least first.
	Counts [5]int `json:"counts"`
}

// Level returns the level of x under p. It reports false for NaN and ±Inf and
// when p grouped no value. Equal values always get the same level, and the level
// never decreases as x grows.
func (p *Partition) Level(x float64) (Level, bool) {
	if p.Method == MethodNone || math.IsNaN(x) || math.IsInf(x, 0) {
		return NoLevel, false
	}
	c := &p.Cuts
	switch {
	case x < c[0].Value || x == c[0].Value && c[0].Outer:
		return Least, true
	case x < c[1].Value || x == c[1].Value && c[1].Outer:
		return Less, true
	case x > c[3].Value || x == c[3].Value && c[3].Outer:
		return Most, true
	case x > c[2].Value || x == c[2].Value && c[2].Outer:
		return More, true
	}
	return Plain, true
}

// Defaults of Options.
const (
	DefaultAlpha     = 0.05
	DefaultMinNormal = 20
	// DefaultK1 and DefaultK2 are the normal quantiles of 0.75 and 0.875: with
	// them a normal sample is cut at the same expected proportions (12.5 %,
	// 12.5 %, 50 %, 12.5 %, 12.5 %) as the quantile strategy cuts any sample.
	DefaultK1 = 0.6744897501960817
	DefaultK2 = 1.1503493803760079
)

// minTested is the smallest sample the Lilliefors p-value approximation is
// valid for.
const minTested = 5

// Options tune the grouping. The zero value (and a nil *Options) uses the
// defaults; a field left zero takes its default.
type Options struct {
	// Alpha is the significance level of the normality test (default 0.05, as
	// in the paper): the sample counts as normal when p > Alpha.
	Alpha float64
	// MinNormal is the smallest number of values for which the normal strategy
	// may be chosen (default 20, at least 5). Below it the test has almost no
	// power, so "not rejected" says nothing, and the quantile strategy is used.
	MinNormal int
	// K1 and K2 (0 < K1 < K2) place the normal cuts at mean ± K1·sd and
	// mean ± K2·sd (defaults DefaultK1 and DefaultK2).
	K1, K2 float64
}

func (o *Options) alpha() float64 {
	if o == nil || o.Alpha <= 0 || o.Alpha >= 1 {
		return DefaultAlpha
	}
	return o.Alpha
}

func (o *Options) minNormal() int {
	if o == nil || o.MinNormal == 0 {
		return DefaultMinNormal
	}
	return num.Max(o.MinNormal, minTested)
}

func (o *Options) ks() (float64, float64) {
	if o == nil || !(o.K1 > 0 && o.K2 > o.K1) || math.IsInf(o.K2, 0) {
		return DefaultK1, DefaultK2
	}
	return o.K1, o.K2
}

// Validate reports options that would silently fall back to a default.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Alpha != 0 && !(o.Alpha > 0 && o.Alpha < 1) {
		return fmt.Errorf("alpha %v: want 0 < alpha < 1", o.Alpha)
	}
	if o.MinNormal < 0 || o.MinNormal > 0 && o.MinNormal < minTested {
		return fmt.Errorf("minimum sample for the normal strategy %d: want at least %d", o.MinNormal, minTested)
	}
	if (o.K1 != 0 || o.K2 != 0) && !(o.K1 > 0 && o.K2 > o.K1 && !math.IsInf(o.K2, 0)) {
		return fmt.Errorf("k1 %v, k2 %v: want 0 < k1 < k2", o.K1, o.K2)
	}
	return nil
}

// Group groups values into five partitions with the default Options.
func Group(values []float64) Partition {
	return (*Options)(nil).Group(values)
}

// Group groups values into five partitions as the paper's Grouping step
// (section 4.3) does:
//
//  1. NaN and ±Inf are left out (Partition.Excluded). No value: MethodNone.
//     All values equal, or a single value: MethodConstant, all Plain.
//  2. With at least MinNormal values, the Lilliefors test decides normality at
//     level Alpha. Normal: cuts at mean ± K1·sd and mean ± K2·sd, a value on a
//     cut going to the outer level.
//  3. Otherwise quantiles: Q1, Q2 (median) and Q3 by linear interpolation
//     (Hyndman–Fan type 7). The lower quarter is the values below Q1 and the
//     upper quarter those above Q3; a value equal to Q1 (Q3) belongs to the
//     lower (upper) quarter unless Q1 (Q3) equals the median. The median of
//     each outer quarter splits it again; a value equal to that median goes to
//     Least (Most) unless the median equals Q1 (Q3) and smaller (larger)
//     values exist. The middle, Q1 to Q3, is Plain.
//
// The level of a value depends only on the value, so ties share a level. Group
// does not modify values. It is safe for concurrent use.
func (o *Options) Group(values []float64) Partition {
	xs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	p := Partition{N: len(xs), Excluded: len(values) - len(xs)}
	if len(xs) == 0 {
		p.Normality.Reason = "no value to group"
		return p
	}
	slices.Sort(xs)
	var momentsOK bool
	p.Mean, p.SD, momentsOK = meanSD(xs)
	p.Median = quantile(xs, 0.5)
	n := len(xs)

	if xs[0] == xs[n-1] {
		p.Method = MethodConstant
		p.SD = 0
		for i := range p.Cuts {
			p.Cuts[i] = Cut{Value: xs[0]}
		}
		if n == 1 {
			p.Normality.Reason = "a single value is Plain"
		} else {
			p.Normality.Reason = "all values are equal: all Plain"
		}
		p.count(xs)
		return p
	}

	k1, k2 := o.ks()
	alpha, minN := o.alpha(), o.minNormal()
	nt := &p.Normality
	momentsOK = momentsOK && p.SD > 0
	if n >= minTested && momentsOK {
		nt.Tested = true
		nt.D, nt.P = lilliefors(xs, p.Mean, p.SD)
	}
	switch {
	case !momentsOK:
		nt.Reason = "mean or standard deviation overflow: quantiles"
	case n < minN:
		nt.Reason = fmt.Sprintf("%d values < %d: too few to rely on a normality test: quantiles", n, minN)
	case nt.P > alpha:
		nt.Normal = true
		nt.Reason = fmt.Sprintf("Lilliefors p=%.3g > %g: normal", nt.P, alpha)
	default:
		nt.Reason = fmt.Sprintf("Lilliefors p=%.3g <= %g: not normal: quantiles", nt.P, alpha)
	}

	if nt.Normal {
		cuts := [4]float64{p.Mean - k2*p.SD, p.Mean - k1*p.SD, p.Mean + k1*p.SD, p.Mean + k2*p.SD}
		// In float64 the cuts may collapse or overflow when sd is tiny or huge
		// relative to the mean.
		if isFinite(cuts[0]) && isFinite(cuts[3]) && cuts[0] < cuts[1] && cuts[1] < cuts[2] && cuts[2] < cuts[3] {
			p.Method = MethodNormal
			for i, c := range cuts {
				p.Cuts[i] = Cut{Value: c, Outer: true}
			}
			p.count(xs)
			return p
		}
		nt.Normal = false
		nt.Reason += "; cuts not representable: quantiles"
	}

	p.Method = MethodQuantiles
	q1, q2, q3 := quantile(xs, 0.25), p.Median, quantile(xs, 0.75)
	// Lower quarter: xs[:lo]; upper quarter: xs[hi:].
	lo := countWhile(xs, func(x float64) bool { return x < q1 || x == q1 && q1 < q2 })
	hi := n - countWhile(reversed(xs), func(x float64) bool { return x > q3 || x == q3 && q3 > q2 })
	p.Cuts[1] = Cut{Value: q1, Outer: q1 < q2}
	p.Cuts[2] = Cut{Value: q3, Outer: q3 > q2}
	// A value equal to the median of an outer quarter goes outwards, unless
	// that median equals the quartile and lower (higher) values exist: then
	// the quartile's ties make up Less (More) and those values Least (Most).
	if lo > 0 {
		mL := quantile(xs[:lo], 0.5)
		p.Cuts[0] = Cut{Value: mL, Outer: mL < q1 || xs[0] == mL}
	} else {
		// Empty lower quarter: nothing is below Q1, so Least and Less stay empty.
		p.Cuts[0] = Cut{Value: q1}
	}
	if hi < n {
		mU := quantile(xs[hi:], 0.5)
		p.Cuts[3] = Cut{Value: mU, Outer: mU > q3 || xs[n-1] == mU}
	} else {
		p.Cuts[3] = Cut{Value: q3}
	}
	p.count(xs)
	return p
}

func (p *Partition) count(xs []float64) {
	for _, x := range xs {
		l, _ := p.Level(x)
		p.Counts[l-Least]++
	}
}

func countWhile(xs []float64, ok func(float64) bool) int {
	n := 0
	for _, x := range xs {
		if !ok(x) {
			break
		}
		n++
	}
	return n
}

func reversed(xs []float64) []float64 {
	r := slices.Clone(xs)
	slices.Reverse(r)
	return r
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// meanSD returns the mean and the sample standard deviation (n-1) with Welford's
// algorithm. Values near ±MaxFloat64 are scaled down first; a result that
// still does not fit a float64 is clamped to ±MaxFloat64 and ok is false.
func meanSD(xs []float64) (mean, sd float64, ok bool) {
	mean, sd = welford(xs, 1)
	if isFinite(mean) && isFinite(sd) {
		return mean, sd, true
	}
	var s float64
	for _, x := range xs {
		s = num.Max(s, math.Abs(x))
	}
	mean, sd = welford(xs, s)
	mean, sd = mean*s, sd*s
	ok = isFinite(mean) && isFinite(sd)
	clamp := func(x float64) float64 { return num.Max(num.Min(x, math.MaxFloat64), -math.MaxFloat64) }
	return clamp(mean), clamp(sd), ok
}

func welford(xs []float64, scale float64) (mean, sd float64) {
	var m2 float64
	for i, x := range xs {
		x /= scale
		d := x - mean
		mean += d / float64(i+1)
		m2 += d * (x - mean)
	}
	if len(xs) < 2 {
		return mean, 0
	}
	return mean, math.Sqrt(m2 / float64(len(xs)-1))
}

// quantile returns the p-quantile of sorted xs by linear interpolation between
// order statistics (Hyndman–Fan type 7, the default of R and NumPy): position
// h = (n-1)p from 0. Equal neighbours give exactly their value.
func quantile(xs []float64, p float64) float64 {
	h := float64(len(xs)-1) * p
	i := int(h)
	if i >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	a, b := xs[i], xs[i+1]
	f := h - float64(i)
	if f == 0 || a == b {
		return a
	}
	q := a + f*(b-a)
	if math.IsInf(q, 0) { // b-a overflowed
		q = a*(1-f) + b*f
	}
	return num.Min(num.Max(q, a), b)
}

// normalCDF is the standard normal distribution function.
func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// lilliefors returns the Kolmogorov–Smirnov distance D between the empirical
// distribution of sorted xs and the normal distribution with the given mean and
// sd (estimated from xs), and its p-value under the composite null hypothesis
// of normality (Lilliefors, 1967). The p-value uses the analytic approximation
// of Dallal and Wilkinson (1986), with n > 100 scaled as they propose; where it
// exceeds 0.1 (outside its validity) it is replaced by Stephens' (1974)
// modified statistic Z = D(√n − 0.01 + 0.85/√n) and the polynomial fit used by
// R's nortest::lillie.test. Requires len(xs) >= 5 and sd > 0.
func lilliefors(xs []float64, mean, sd float64) (d, p float64) {
	n := float64(len(xs))
	for i, x := range xs {
		f := normalCDF((x - mean) / sd)
		d = num.Max(d, num.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d, lillieforsP(d, n)
}

// lillieforsP is the p-value of the Lilliefors statistic d for n values.
func lillieforsP(d, n float64) float64 {
	kd, nd := d, n
	if n > 100 {
		kd, nd = d*math.Pow(n/100, 0.49), 100
	}
	p := math.Exp(-7.01256*kd*kd*(nd+2.78019) + 2.99587*kd*math.Sqrt(nd+2.78019) -
		0.122119 + 0.974598/math.Sqrt(nd) + 1.67997/nd)
	if p > 0.1 {
		z := (math.Sqrt(n) - 0.01 + 0.85/math.Sqrt(n)) * d
		switch {
		case z <= 0.302:
			p = 1
		case z <= 0.5:
			p = 2.76773 - 19.828315*z + 80.709644*z*z - 138.55152*z*z*z + 81.218052*z*z*z*z
		case z <= 0.9:
			p = -4.901232 + 40.662806*z - 97.490286*z*z + 94.029866*z*z*z - 32.355711*z*z*z*z
		case z <= 1.31:
			p = 6.198765 - 19.558097*z + 23.186922*z*z - 12.234627*z*z*z + 2.423045*z*z*z*z
		default:
			p = 0
		}
	}
	return num.Min(num.Max(p, 0), 1)
}
