package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func TestWriteLineChart(t *testing.T) {
	c := &LineChart{
		Title: "throughput <by> sampling", XTitle: "sampling", YTitle: "req/s", Unit: "req/s",
		X: []string{"100%", "50%", "1%"},
		Levels: []ChartLevel{
			{Name: "no monitoring", Value: 1000, CI: 10},
			{Name: "phase 1 only", Value: 990, CI: 12},
			{Name: "full monitoring", Value: 700},
		},
		Series: []ChartSeries{
			{Name: "restricted", Values: []float64{900, 950, 985}, CIs: []float64{20, 15, 10}},
			{Name: "expanded", Values: []float64{800, math.NaN(), 980}},
		},
		RelativeTo: 1000, RelativeToTitle: "% of no monitoring",
	}
	var b bytes.Buffer
	if err := WriteLineChart(&b, c); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if markers := groups(t, svg); markers != 5 {
		t.Errorf("%d points drawn, want 5 (the NaN left out)", markers)
	}
	for _, want := range []string{"throughput &lt;by&gt; sampling", "no monitoring", "phase 1 only", "full monitoring",
		"restricted", "expanded", "100%", "1%", "% of no monitoring", "axis from", "restricted, 50%: 950 ± 15 req/s"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	// The expanded line is broken at the missing point: two moves, no line.
	for _, l := range strings.Split(svg, "\n") {
		if strings.HasPrefix(l, `<path d="M`) && strings.Contains(l, `stroke="`+seriesColors[1]+`"`) {
			if strings.Count(l, "M ") != 2 || strings.Contains(l, "L ") {
				t.Errorf("the expanded line: %s", l)
			}
		}
	}

	c.Series[0].Values = c.Series[0].Values[:2]
	if err := WriteLineChart(io.Discard, c); err == nil || !strings.Contains(err.Error(), `series "restricted"`) {
		t.Errorf("a short series: %v", err)
	}
	if err := WriteLineChart(io.Discard, &LineChart{}); err == nil {
		t.Error("an empty chart: no error")
	}
}

func TestRangeTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{640, 1030, "600 700 800 900 1000 1100"},
		{0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{5, 5, "5"},
	} {
		var got []string
		for _, v := range rangeTicks(c.lo, c.hi) {
			got = append(got, fmtTick(v))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("rangeTicks(%v, %v) = %v, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

// groups checks that svg is well-formed XML and counts its <g> elements, one
// per drawn point.
func groups(t *testing.T, svg string) int {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	n := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "g" {
			n++
		}
	}
}
