package moments

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMoments(t *testing.T) {
	m := Of([]float64{10, 12, 14})
	// s = 2, t(2) = 4.303.
	if m.N() != 3 || !near(m.Mean(), 12) || !near(m.StdDev(), 2) || !near(m.Variance(), 4) || !near(m.CI95(), 4.303*2/math.Sqrt(3)) {
		t.Errorf("Of(10, 12, 14) = n %d, mean %v, sd %v, ci %v; want 3, 12, 2, %v", m.N(), m.Mean(), m.StdDev(), m.CI95(), 4.303*2/math.Sqrt(3))
	}
	if m := Of([]int64{7}); m.Mean() != 7 || m.StdDev() != 0 || m.CI95() != 0 {
		t.Errorf("one value: mean %v, sd %v, ci %v", m.Mean(), m.StdDev(), m.CI95())
	}
	var zero Moments
	if zero.N() != 0 || zero.Mean() != 0 || zero.StdDev() != 0 || zero.CI95() != 0 {
		t.Errorf("empty: %+v", zero)
	}
	// 50 zeros and 50 tens: from 30 values on the interval is the normal one.
	xs := make([]int64, 100)
	for i := range xs {
		xs[i] = int64(i % 2 * 10)
	}
	sd := math.Sqrt(100 * 25 / 99.0)
	if m := Of(xs); !near(m.Mean(), 5) || !near(m.StdDev(), sd) || !near(m.CI95(), 1.96*sd/10) {
		t.Errorf("100 values: mean %v, sd %v, ci %v", m.Mean(), m.StdDev(), m.CI95())
	}
}

// TestMomentsStable adds values with a large offset, where the textbook
// sum-of-squares formula loses every digit of the variance.
func TestMomentsStable(t *testing.T) {
	var m Moments
	for _, x := range []float64{4, 7, 13, 16} {
		m.Add(1e9 + x)
	}
	if !near(m.Mean(), 1e9+10) || !near(m.Variance(), 30) {
		t.Errorf("offset 1e9: mean %v, variance %v; want 1e9+10, 30", m.Mean(), m.Variance())
	}
}

func TestCritical95(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 8: 2.306, 29: 2.045, 30: 1.96, 0: 1.96, 1000: 1.96} {
		if got := Critical95(df); got != want {
			t.Errorf("Critical95(%d) = %v, want %v", df, got, want)
		}
	}
}

func TestRatioCI95(t *testing.T) {
	r, ci := RatioCI95(90, 0.9, 100, 2)
	want := 0.9 * math.Hypot(0.01, 0.02)
	if !near(r, 0.9) || !near(ci, want) {
		t.Errorf("RatioCI95 = %v ± %v, want 0.9 ± %v", r, ci, want)
	}
	if r, ci := RatioCI95(50, 0, 100, 2); r != 0.5 || ci != 0 {
		t.Errorf("without the numerator's interval: %v ± %v", r, ci)
	}
	if r, _ := RatioCI95(1, 1, 0, 1); !math.IsNaN(r) {
		t.Errorf("over 0: %v, want NaN", r)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := slices.Clone(c.xs)
		if got := Median(c.xs); got != c.want || !slices.Equal(in, c.xs) {
			t.Errorf("Median(%v) = %v, want %v (input left as it was)", in, got, c.want)
		}
	}
	if got := Median([]int64{7, 1}); got != 4 {
		t.Errorf("Median of int64 = %v, want 4", got)
	}
}
