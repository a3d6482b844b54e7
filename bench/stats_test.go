package bench

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestComputeOdd(t *testing.T) {
	s := Compute([]int64{9, 1, 8, 2, 7, 3, 6, 4, 5})
	// mean 5, s² = 60/8, t(8) = 2.306, CI = 2.306·√7.5/3.
	want := Stats{N: 9, Mean: 5, StdDev: math.Sqrt(7.5), CI95: 2.306 * math.Sqrt(7.5) / 3,
		Median: 5, Q1: 2.5, Q3: 7.5, Min: 1, Max: 9}
	checkStats(t, s, want)
}

func TestComputeEven(t *testing.T) {
	s := Compute([]int64{8, 7, 6, 5, 4, 3, 2, 1})
	// s² = 42/7 = 6, t(7) = 2.365.
	want := Stats{N: 8, Mean: 4.5, StdDev: math.Sqrt(6), CI95: 2.365 * math.Sqrt(6) / math.Sqrt(8),
		Median: 4.5, Q1: 2.5, Q3: 6.5, Min: 1, Max: 8}
	checkStats(t, s, want)
}

func TestComputeLargeUsesNormal(t *testing.T) {
	xs := make([]int64, 100)
	for i := range xs {
		xs[i] = int64(i % 2 * 10) // 50 zeros, 50 tens
	}
	s := Compute(xs)
	sd := math.Sqrt(100 * 25 / 99.0)
	want := Stats{N: 100, Mean: 5, StdDev: sd, CI95: 1.96 * sd / 10, Median: 5, Q1: 0, Q3: 10, Min: 0, Max: 10}
	checkStats(t, s, want)
}

func TestComputeSmall(t *testing.T) {
	checkStats(t, Compute(nil), Stats{})
	checkStats(t, Compute([]int64{42}), Stats{N: 1, Mean: 42, Median: 42, Q1: 42, Q3: 42, Min: 42, Max: 42})
	// n = 3: halves are {1} and {100}.
	checkStats(t, Compute([]int64{100, 1, 4}), Stats{N: 3, Mean: 35, StdDev: math.Sqrt((34*34 + 31*31 + 65*65) / 2.0),
		CI95: 4.303 * math.Sqrt((34*34+31*31+65*65)/2.0) / math.Sqrt(3), Median: 4, Q1: 1, Q3: 100, Min: 1, Max: 100})
}

func checkStats(t *testing.T, got, want Stats) {
	t.Helper()
	if got.N != want.N || got.Min != want.Min || got.Max != want.Max ||
		!near(got.Mean, want.Mean) || !near(got.StdDev, want.StdDev) || !near(got.CI95, want.CI95) ||
		!near(got.Median, want.Median) || !near(got.Q1, want.Q1) || !near(got.Q3, want.Q3) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestDiffCI95(t *testing.T) {
	a := Stats{N: 100, StdDev: 3}
	b := Stats{N: 400, StdDev: 4}
	want := 1.96 * math.Sqrt(9/100.0+16/400.0)
	if got := DiffCI95(a, b); !near(got, want) {
		t.Errorf("DiffCI95 = %v, want %v", got, want)
	}
	if got := DiffCI95(Stats{N: 1}, b); got != 0 {
		t.Errorf("DiffCI95 with n = 1: %v, want 0", got)
	}
}

func TestWarmupCalls(t *testing.T) {
	for _, c := range []struct {
		calls  int
		warmup float64
		want   int
	}{{2_000_000, 0.5, 1_000_000}, {3, 0.5, 1}, {10, 0, 0}, {10, 0.99, 9}, {10, 1.5, 10}, {10, -1, 0}} {
		if got := WarmupCalls(c.calls, c.warmup); got != c.want {
			t.Errorf("WarmupCalls(%d, %v) = %d, want %d", c.calls, c.warmup, got, c.want)
		}
	}
}
