package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ControlChart is the overhead budget's control loop over analysis cycles
// (docs/analysis.md): in the top panel the sampling rate the controller chose
// against the configured one, in the bottom panel the share of CPU time fine
// tracing took in each cycle's window, measured and predicted, against the
// budget. Both axes are logarithmic, so "at most twofold per cycle" is a
// staircase of equal steps. WriteControlChart draws it.
type ControlChart struct {
	Title, Subtitle string
	Cycles          []ControlCycle
	// Marks label cycles where something changed, e.g. "budget lowered",
	// drawn as a vertical line before that cycle.
	Marks map[int]string
}

// ControlCycle is one cycle: shares are fractions (0.02 for 2 %); NaN leaves
// a point out.
type ControlCycle struct {
	Seq                 int
	Budget              float64 // the overhead budget in force
	Configured, Rate    float64 // the configured sampling rate and the one chosen
	Predicted, Measured float64 // CPU share: the controller's prediction at Rate, and what the window's records cost
}

// WriteControlChart draws c as SVG.
func WriteControlChart(w io.Writer, c *ControlChart) error {
	n := len(c.Cycles)
	if n == 0 {
		return errors.New("control chart: no cycles")
	}
	const (
		left, right   = 80.0, 150.0
		plotW, panelH = 620.0, 190.0
		top1          = 74.0
		gap           = 58.0
	)
	top2 := top1 + panelH + gap
	width, height := left+plotW+right, top2+panelH+52
	slot := plotW / float64(n)
	x := func(i int) float64 { return left + slot*(float64(i)+0.5) }

	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	svgStart(bw, width, height, left, 24, 44, c.Title, c.Subtitle)

	col := func(f func(*ControlCycle) float64) []float64 {
		out := make([]float64, n)
		for i := range c.Cycles {
			out[i] = f(&c.Cycles[i])
		}
		return out
	}
	type series struct {
		name, color, dash string
		step, markers     bool
		values            []float64
	}
	panel := func(top float64, title string, ceil float64, ss []series) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range ss {
			for _, v := range s.values {
				if v > 0 && !math.IsInf(v, 0) {
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
		}
		if math.IsInf(lo, 1) {
			lo, hi = 0.01, 1
		}
		ticks := logTicks(lo/1.3, math.Min(hi*1.3, ceil))
		llo, lhi := math.Log10(ticks[0]), math.Log10(ticks[len(ticks)-1])
		y := func(v float64) float64 { return top + panelH - (math.Log10(v)-llo)/(lhi-llo)*panelH }
		axes(bw, ticks, y, percent, left, top, plotW, panelH)
		text(bw, 18, top+panelH/2, "middle", fmt.Sprintf(`transform="rotate(-90 18 %.1f)"`, top+panelH/2), title+" (log scale)")
		for i, cy := range c.Cycles {
			line(bw, x(i), top+panelH, x(i), top+panelH+4, "#333")
			if n <= 30 || i%2 == 0 {
				text(bw, x(i), top+panelH+16, "middle", `font-size="10"`, strconv.Itoa(cy.Seq))
			}
		}
		for i, label := range c.Marks {
			if i <= 0 || i >= n {
				continue
			}
			xx := left + slot*float64(i)
			fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="2 3"/>`+"\n", xx, top, xx, top+panelH)
			text(bw, xx+3, top+panelH-6, "start", `fill="#666" font-size="10"`, label)
		}
		ly := top + 8
		for _, s := range ss {
			var path strings.Builder
			pen := "M"
			for i, v := range s.values {
				if !(v > 0) {
					pen = "M"
					continue
				}
				if s.step {
					fmt.Fprintf(&path, "%s %.1f %.2f L %.1f %.2f ", pen, x(i)-slot/2, y(v), x(i)+slot/2, y(v))
				} else {
					fmt.Fprintf(&path, "%s %.1f %.2f ", pen, x(i), y(v))
				}
				pen = "L"
			}
			fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="2" fill="none" stroke-dasharray="%s"/>`+"\n", strings.TrimSpace(path.String()), s.color, s.dash)
			if s.markers {
				for i, v := range s.values {
					if v > 0 {
						fmt.Fprintf(bw, `<g><title>%s</title>`, escape(fmt.Sprintf("cycle %d, %s: %s", c.Cycles[i].Seq, s.name, percent(v))))
						marker(bw, "circle", x(i), y(v), s.color)
						fmt.Fprintln(bw, `</g>`)
					}
				}
			}
			// The legend at the right of the panel.
			fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n",
				left+plotW+12, ly, left+plotW+32, ly, s.color, s.dash)
			text(bw, left+plotW+38, ly+4, "start", "", s.name)
			ly += 16
		}
	}
	panel(top1, "sampling rate", 1, []series{
		{name: "configured", color: "#333333", dash: "6 4", step: true, values: col(func(c *ControlCycle) float64 { return c.Configured })},
		{name: "in force", color: "#4e79a7", markers: true, values: col(func(c *ControlCycle) float64 { return c.Rate })},
	})
	panel(top2, "share of CPU", math.Inf(1), []series{
		{name: "budget", color: "#e15759", dash: "6 4", step: true, values: col(func(c *ControlCycle) float64 { return c.Budget })},
		{name: "predicted", color: "#76b7b2", values: col(func(c *ControlCycle) float64 { return c.Predicted })},
		{name: "measured", color: "#f28e2b", markers: true, values: col(func(c *ControlCycle) float64 { return c.Measured })},
	})
	text(bw, left+plotW/2, top2+panelH+38, "middle", "", "analysis cycle")
	return svgEnd(w, &b, bw)
}

// logTicks returns 1, 2, 5 × 10^k ticks covering [lo, hi] (0 < lo < hi), the
// first at or below lo and the last at or above hi.
func logTicks(lo, hi float64) []float64 {
	var ts []float64
	for k := math.Floor(math.Log10(lo)); ; k++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, k)
			if v <= lo {
				ts = ts[:0] // only the largest tick at or below lo
			}
			ts = append(ts, v)
			if v >= hi {
				return ts
			}
		}
	}
}

// percent writes a share as a percentage with up to 3 significant digits.
func percent(v float64) string {
	return strconv.FormatFloat(100*v, 'g', 3, 64) + "%"
}
