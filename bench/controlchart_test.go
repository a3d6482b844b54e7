package bench

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestWriteControlChart(t *testing.T) {
	c := &ControlChart{Title: "budget <loop>", Subtitle: "petclinic", Marks: map[int]string{2: "budget lowered"}}
	for i, r := range []float64{1, 1, 0.05, 0.1, 0.2} {
		budget := 1e-4
		if i >= 2 {
			budget = 5e-6
		}
		c.Cycles = append(c.Cycles, ControlCycle{Seq: i + 1, Budget: budget, Configured: 1, Rate: r, Predicted: r * 1e-5, Measured: math.NaN()})
	}
	c.Cycles[3].Measured = 4e-6
	var b bytes.Buffer
	if err := WriteControlChart(&b, c); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	points := groups(t, svg)
	if points != 6 { // five rates, one measured share
		t.Errorf("%d points drawn; want 6", points)
	}
	for _, want := range []string{"budget &lt;loop&gt;", "sampling rate (log scale)", "share of CPU (log scale)", "budget lowered",
		"in force", "configured", "measured", "predicted", "cycle 3, in force: 5%", "cycle 4, measured: 0.0004%"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if err := WriteControlChart(&b, &ControlChart{}); err == nil {
		t.Error("a chart without cycles: no error")
	}
}

func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0.03, 1, []float64{0.02, 0.05, 0.1, 0.2, 0.5, 1}},
		{0.05, 0.3, []float64{0.05, 0.1, 0.2, 0.5}},
		{7e-7, 2e-6, []float64{5e-7, 1e-6, 2e-6}},
	} {
		got := logTicks(tc.lo, tc.hi)
		if len(got) != len(tc.want) || !slices.EqualFunc(got, tc.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-12*b }) {
			t.Errorf("logTicks(%v, %v) = %v; want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}
