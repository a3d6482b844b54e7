package dash

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHistBuckets(t *testing.T) {
	prevHi := int64(-1)
	for i := range histBucket(math.MaxInt64) + 1 {
		lo, hi := histRange(i)
		if lo != prevHi+1 || hi < lo {
			t.Fatalf("bucket %d = [%d, %d] after %d", i, lo, hi, prevHi)
		}
		if histBucket(lo) != i || histBucket(hi) != i {
			t.Fatalf("bucket %d = [%d, %d], but its ends fall into %d and %d", i, lo, hi, histBucket(lo), histBucket(hi))
		}
		if lo >= 32 && float64(hi-lo+1) > float64(lo)/16 {
			t.Fatalf("bucket %d = [%d, %d] wider than a 16th of its value", i, lo, hi)
		}
		prevHi = hi
		if hi == math.MaxInt64 {
			break
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	var vals []int64
	for range 10000 {
		v := int64(math.Exp(rng.NormFloat64()*1.5 + 12)) // log-normal around 160µs
		vals = append(vals, v)
		h.add(v)
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.95, 0.99, 1} {
		want := float64(vals[int(math.Ceil(q*float64(len(vals))))-1])
		if got := h.quantile(q); math.Abs(got-want) > want*0.032 {
			t.Errorf("q%.2f = %.0f, want %.0f within 3.2%%", q, got, want)
		}
	}
	bins := h.bins(24)
	if len(bins) > 24 || len(bins) < 12 {
		t.Errorf("%d bins", len(bins))
	}
	var n uint64
	for i, b := range bins {
		n += b.Count
		if i > 0 && b.Lo != bins[i-1].Hi+1 {
			t.Errorf("bin %d starts at %.0f after %.0f", i, b.Lo, bins[i-1].Hi)
		}
	}
	if n != 10000 || bins[0].Lo > float64(vals[0]) || bins[len(bins)-1].Hi != float64(vals[len(vals)-1]) {
		t.Errorf("bins count %d from %.0f to %.0f; values from %d to %d", n, bins[0].Lo, bins[len(bins)-1].Hi, vals[0], vals[len(vals)-1])
	}
	var empty hist
	if empty.quantile(0.5) != 0 || empty.bins(10) != nil {
		t.Error("empty histogram")
	}
}
