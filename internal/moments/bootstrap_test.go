package moments

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMedianCI95(t *testing.T) {
	if m, lo, hi := MedianCI95(nil, 1); !math.IsNaN(m) || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("no values: %v [%v, %v]", m, lo, hi)
	}
	if m, lo, hi := MedianCI95([]float64{3}, 1); m != 3 || lo != 3 || hi != 3 {
		t.Errorf("one value: %v [%v, %v]", m, lo, hi)
	}
	xs := []float64{10, 11, 9, 10.5, 9.5, 10.2, 9.8, 30, 10.1, 9.9, 10.3, 9.7}
	m, lo, hi := MedianCI95(xs, 7)
	if m != Median(xs) || !(lo <= m && m <= hi) || lo < 9 || hi > 11 {
		t.Errorf("median %v [%v, %v]: want the median inside, the outlier 30 outside", m, lo, hi)
	}
	if m2, lo2, hi2 := MedianCI95(xs, 7); m2 != m || lo2 != lo || hi2 != hi {
		t.Errorf("same seed, another interval: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	if xs[7] != 30 {
		t.Error("MedianCI95 changed its input")
	}
}

// TestMedianCI95Coverage draws samples of 15 from a normal distribution and
// counts how often the interval holds the true median: about 95 % of the
// time, not (as a broken interval would) almost never or always.
func TestMedianCI95Coverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	held, trials := 0, 300
	for i := range trials {
		xs := make([]float64, 15)
		for j := range xs {
			xs[j] = 100 + 5*rng.NormFloat64()
		}
		if _, lo, hi := MedianCI95(xs, uint64(i)); lo <= 100 && 100 <= hi {
			held++
		}
	}
	if share := float64(held) / float64(trials); share < 0.85 || share > 0.995 {
		t.Errorf("the interval held the true median in %.1f %% of %d samples, want about 95 %%", 100*share, trials)
	}
}

func TestRatioOfMediansCI95(t *testing.T) {
	a := []float64{110, 112, 108, 111, 109, 110, 113, 107}
	b := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	r, lo, hi := RatioOfMediansCI95(a, b, 3)
	if want := Median(a) / Median(b); r != want || !(lo <= r && r <= hi) || lo <= 1 || hi > 1.2 {
		t.Errorf("ratio %v [%v, %v], want %v inside an interval above 1", r, lo, hi, want)
	}
	if r, lo, hi := RatioOfMediansCI95(b, b, 3); r != 1 || lo > 1 || hi < 1 {
		t.Errorf("b/b: %v [%v, %v]", r, lo, hi)
	}
	if r, _, _ := RatioOfMediansCI95(a, []float64{0, 0}, 3); !math.IsNaN(r) {
		t.Errorf("over a zero median: %v", r)
	}
	if r, lo, hi := RatioOfMediansCI95([]float64{2}, []float64{1, 1}, 3); r != 2 || lo != 2 || hi != 2 {
		t.Errorf("one value: %v [%v, %v]", r, lo, hi)
	}
}

// rounds are n rounds of a baseline and a configuration ratio times as
// costly, measured together: each round scales both by a shared factor
// between 0.6 and 1.6 (a slow round) and each value by 1 % noise of its own.
func rounds(rng *rand.Rand, n int, ratio float64) (a, b []float64) {
	for range n {
		round := 600 + 1000*rng.Float64()
		b = append(b, round*(1+0.01*rng.NormFloat64()))
		a = append(a, ratio*round*(1+0.01*rng.NormFloat64()))
	}
	return a, b
}

// TestPairedRatioCI95 has a round effect far larger than the 5 % the
// configuration costs: paired by round the interval is tight and excludes 1;
// unpaired (the same values in RatioOfMediansCI95) it holds 1.
func TestPairedRatioCI95(t *testing.T) {
	a, b := rounds(rand.New(rand.NewPCG(3, 4)), 12, 1.05)
	r, lo, hi, n := PairedRatioCI95(a, b, 5)
	if n != 12 || !(lo <= r && r <= hi) || lo < 1.03 || hi > 1.07 {
		t.Errorf("paired: %v [%v, %v] over %d pairs, want about 1.05 in a tight interval above 1", r, lo, hi, n)
	}
	if _, ulo, uhi := RatioOfMediansCI95(a, b, 5); ulo > 1 || uhi < 1 {
		t.Errorf("unpaired: [%v, %v], want 1 inside (the round effect swamps the 5 %%)", ulo, uhi)
	}
	if r2, lo2, hi2, _ := PairedRatioCI95(a, b, 5); r2 != r || lo2 != lo || hi2 != hi {
		t.Errorf("same seed, another interval: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	// Left out: the pair with a 0 and the value without a partner.
	if r, lo, hi, n := PairedRatioCI95([]float64{2, 3, 9}, []float64{1, 0}, 1); r != 2 || lo != 2 || hi != 2 || n != 1 {
		t.Errorf("one usable pair: %v [%v, %v] over %d", r, lo, hi, n)
	}
	if r, _, _, n := PairedRatioCI95(nil, []float64{1}, 1); !math.IsNaN(r) || n != 0 {
		t.Errorf("no pairs: %v over %d", r, n)
	}
	// Two pairs: the median of the logs is their mean, the geometric mean
	// of the ratios.
	if r, _, _, _ := PairedRatioCI95([]float64{2, 8}, []float64{1, 1}, 1); math.Abs(r-4) > 1e-12 {
		t.Errorf("ratios 2 and 8: %v, want 4", r)
	}
}

// TestPairedRatioCI95Coverage draws rounds of 12 pairs whose true ratio is
// 1.05 and counts how often the interval holds it: about 95 % of the time.
func TestPairedRatioCI95Coverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	held, trials := 0, 300
	for i := range trials {
		a, b := rounds(rng, 12, 1.05)
		if _, lo, hi, _ := PairedRatioCI95(a, b, uint64(i)); lo <= 1.05 && 1.05 <= hi {
			held++
		}
	}
	if share := float64(held) / float64(trials); share < 0.85 || share > 0.995 {
		t.Errorf("the interval held the true ratio in %.1f %% of %d samples, want about 95 %%", 100*share, trials)
	}
}
