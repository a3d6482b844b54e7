package traceconv

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDistExactQuantiles(t *testing.T) {
	var d durDist
	for _, v := range []int64{50, 10, 40, 20, 30} {
		d.add(v)
	}
	for q, want := range map[float64]int64{0.2: 10, 0.5: 30, 0.95: 50, 1: 50} {
		if got := d.quantile(q); got != want {
			t.Errorf("quantile(%v) = %d; want %d", q, got, want)
		}
	}
	if d.mean() != 30 || d.max != 50 || d.total != 150 {
		t.Errorf("mean %d max %d total %d", d.mean(), d.max, d.total)
	}
	var empty durDist
	if empty.quantile(0.5) != 0 || empty.mean() != 0 {
		t.Error("empty distribution is not zero")
	}
}

// Past exactMax values the histogram answers within its 1/64 bucket width.
func TestDistHistogramQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var d durDist
	var all []int64
	for range 100_000 {
		v := int64(rng.ExpFloat64() * 50_000) // a long-tailed latency, mean 50µs
		d.add(v)
		all = append(all, v)
	}
	if d.exact != nil {
		t.Fatal("still exact after 100000 values")
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.95, 0.99} {
		want := all[int(q*float64(len(all)))-1]
		got := d.quantile(q)
		if diff := float64(got-want) / float64(want); diff > 1.0/64 || diff < -1.0/64 {
			t.Errorf("quantile(%v) = %d; exact %d (%.2f%% off)", q, got, want, 100*diff)
		}
	}
	if d.quantile(1) != all[len(all)-1] {
		t.Errorf("quantile(1) = %d; want the maximum %d", d.quantile(1), all[len(all)-1])
	}
}

func TestBuckets(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 127, 128, 129, 255, 256, 1000, 1 << 20, 1<<62 + 12345, 1<<63 - 1} {
		i := bucketOf(v)
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Errorf("%d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if v >= 128 && float64(hi-lo+1) > float64(v)/64 {
			t.Errorf("bucket of %d is %d wide, more than 1/64 of it", v, hi-lo+1)
		}
		if i < prev {
			t.Errorf("bucket of %d is %d, below the previous %d", v, i, prev)
		}
		prev = i
	}
}
