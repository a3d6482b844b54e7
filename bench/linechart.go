package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// LineChart is a chart of values over a few categories, with horizontal
// reference levels across the whole plot: the shape of Fig. 4 of the Tigris
// paper (throughput by sampling rate, with no monitoring, full monitoring and
// the first phase alone as horizontal lines). WriteLineChart draws it.
type LineChart struct {
	Title, Subtitle string
	XTitle, YTitle  string
	// X are the category labels, left to right, evenly spaced.
	X []string
	// Levels are drawn as horizontal lines with a band for their confidence
	// interval, labelled at the right end.
	Levels []ChartLevel
	// Series are drawn as lines through one point per category, with error bars.
	Series []ChartSeries
	// RelativeTo, when positive, adds a right-hand axis that gives every
	// gridline as a percentage of this value (e.g. the no-monitoring level).
	RelativeTo      float64
	RelativeToTitle string
	// Unit follows every value in tooltips and level labels, e.g. "req/s".
	Unit string
}

// ChartLevel is one horizontal reference line: a mean and the half-width of its
// 95 % confidence interval.
type ChartLevel struct {
	Name      string
	Value, CI float64
}

// ChartSeries is one line of a LineChart: a value and a confidence half-width
// per category (Values[i] belongs to X[i]; NaN leaves the point out).
type ChartSeries struct {
	Name   string
	Values []float64
	CIs    []float64
}

var (
	levelStyles  = []struct{ color, dash string }{{"#333333", "8 4"}, {"#e15759", "3 3"}, {"#59a14f", "12 3 3 3"}, {"#9c755f", "2 6"}}
	seriesColors = []string{"#4e79a7", "#f28e2b", "#76b7b2", "#b07aa1", "#edc948"}
	markers      = []string{"circle", "square", "diamond", "triangle"}
)

// WriteLineChart draws c as SVG. The y axis spans the values and their
// intervals with some margin; it does not start at 0 unless the values come
// close, so the chart says so under the axis title.
func WriteLineChart(w io.Writer, c *LineChart) error {
	if len(c.X) == 0 && len(c.Levels) == 0 {
		return errors.New("line chart: no categories and no levels")
	}
	for _, s := range c.Series {
		if len(s.Values) != len(c.X) || (s.CIs != nil && len(s.CIs) != len(c.X)) {
			return fmt.Errorf("line chart: series %q has %d values and %d intervals for %d categories", s.Name, len(s.Values), len(s.CIs), len(c.X))
		}
	}
	const (
		left, right  = 90.0, 190.0
		plotH, plotW = 340.0, 600.0
		bottom       = 62.0
		titleY, subY = 24.0, 44.0
		legendY      = 68.0 // first legend row
		legendRow    = 17.0
	)
	// One legend row per series (their names can be long), one for the levels.
	rows := len(c.Series)
	if len(c.Levels) > 0 {
		rows++
	}
	top := legendY + legendRow*float64(rows) + 6
	width, height := left+plotW+right, top+plotH+bottom

	// The y range: every value with its interval, padded, on nice ticks.
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(v, ci float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		ci = math.Abs(ci)
		lo, hi = min(lo, v-ci), max(hi, v+ci)
	}
	for _, l := range c.Levels {
		see(l.Value, l.CI)
	}
	for _, s := range c.Series {
		for i, v := range s.Values {
			see(v, ciAt(s.CIs, i))
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	pad := max((hi-lo)*0.08, math.Abs(hi)*0.01, 1e-9)
	lo, hi = lo-pad, hi+pad
	if lo < 0.25*hi && lo > 0 || lo < 0 && c.nonNegative() {
		lo = 0 // close to zero anyway: show it
	}
	ticks := rangeTicks(lo, hi)
	lo, hi = min(lo, ticks[0]), max(hi, ticks[len(ticks)-1])
	y := func(v float64) float64 { return top + plotH - (v-lo)/(hi-lo)*plotH }
	slot := plotW / float64(max(len(c.X), 1))
	x := func(i int) float64 { return left + slot*(float64(i)+0.5) }

	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	svgStart(bw, width, height, left, titleY, subY, c.Title, c.Subtitle)

	// Legend: a row per series, then the levels side by side.
	ly := legendY
	for i, s := range c.Series {
		col := seriesColors[i%len(seriesColors)]
		line(bw, left, ly-4, left+22, ly-4, col)
		marker(bw, markers[i%len(markers)], left+11, ly-4, col)
		text(bw, left+28, ly, "start", "", s.Name)
		ly += legendRow
	}
	lx := left
	for i, l := range c.Levels {
		st := levelStyles[i%len(levelStyles)]
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`+"\n",
			lx, ly-4, lx+22, ly-4, st.color, st.dash)
		text(bw, lx+28, ly, "start", "", l.Name)
		lx += 28 + 6.5*float64(len([]rune(l.Name))) + 18
	}

	// Grid and axes; the right axis, in percent of RelativeTo, has its own
	// round ticks.
	axes(bw, ticks, y, fmtTick, left, top, plotW, plotH)
	if ref := c.RelativeTo; ref > 0 {
		line(bw, left+plotW, top, left+plotW, top+plotH, "#999")
		for _, pct := range rangeTicks(100*lo/ref, 100*hi/ref) {
			if yy := y(pct * ref / 100); yy >= top-0.5 && yy <= top+plotH+0.5 {
				line(bw, left+plotW, yy, left+plotW+4, yy, "#999")
				text(bw, left+plotW+7, yy+4, "start", `fill="#777" font-size="10"`, fmtTick(pct)+"%")
			}
		}
	}
	yTitle := c.YTitle
	if lo > 0 {
		yTitle += " (axis from " + fmtTick(lo) + ")"
	}
	text(bw, 18, top+plotH/2, "middle", fmt.Sprintf(`transform="rotate(-90 18 %.1f)"`, top+plotH/2), yTitle)
	if c.RelativeTo > 0 && c.RelativeToTitle != "" {
		rx := left + plotW + 46
		text(bw, rx, top+plotH/2, "middle", fmt.Sprintf(`fill="#777" font-size="10" transform="rotate(90 %.1f %.1f)"`, rx, top+plotH/2), c.RelativeToTitle)
	}
	for i, l := range c.X {
		line(bw, x(i), top+plotH, x(i), top+plotH+5, "#333")
		text(bw, x(i), top+plotH+18, "middle", "", l)
	}
	text(bw, left+plotW/2, top+plotH+42, "middle", "", c.XTitle)

	// Levels: a band for the interval, the line, the label at the right end
	// (moved down when it would overlap the one above).
	lastLabel := math.Inf(-1)
	order := make([]int, len(c.Levels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(c.Levels[b].Value, c.Levels[a].Value) })
	for _, i := range order {
		l := c.Levels[i]
		if math.IsNaN(l.Value) {
			continue
		}
		st := levelStyles[i%len(levelStyles)]
		if l.CI > 0 {
			y1, y2 := y(l.Value+l.CI), y(l.Value-l.CI)
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s" fill-opacity="0.10"/>`+"\n", left, y1, plotW, y2-y1, st.color)
		}
		yy := y(l.Value)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.2f" x2="%.1f" y2="%.2f" stroke="%s" stroke-width="2" stroke-dasharray="%s"><title>%s</title></line>`+"\n",
			left, yy, left+plotW, yy, st.color, st.dash, escape(l.Name+": "+fmtValue(l.Value, l.CI, c.Unit)))
		ly := max(yy+4, lastLabel+13)
		lastLabel = ly
		lx := left + plotW + 8
		if c.RelativeTo > 0 {
			lx += 52
		}
		text(bw, lx, ly, "start", fmt.Sprintf(`fill="%s" font-size="10"`, st.color), l.Name)
	}

	// Series: error bars, the line, the markers.
	for si, s := range c.Series {
		col := seriesColors[si%len(seriesColors)]
		var path strings.Builder
		pen := "M"
		for i, v := range s.Values {
			if math.IsNaN(v) {
				pen = "M"
				continue
			}
			fmt.Fprintf(&path, "%s %.1f %.2f ", pen, x(i), y(v))
			pen = "L"
		}
		fmt.Fprintf(bw, `<path d="%s" stroke="%s" stroke-width="2" fill="none"/>`+"\n", strings.TrimSpace(path.String()), col)
		for i, v := range s.Values {
			if math.IsNaN(v) {
				continue
			}
			// Series side by side within a category, so the bars do not hide
			// each other.
			bx := x(i) + (float64(si)-float64(len(c.Series)-1)/2)*6
			if ci := ciAt(s.CIs, i); ci > 0 {
				line(bw, bx, y(v-ci), bx, y(v+ci), col)
				line(bw, bx-4, y(v-ci), bx+4, y(v-ci), col)
				line(bw, bx-4, y(v+ci), bx+4, y(v+ci), col)
			}
			fmt.Fprintf(bw, `<g><title>%s</title>`, escape(fmt.Sprintf("%s, %s: %s", s.Name, c.X[i], fmtValue(v, ciAt(s.CIs, i), c.Unit))))
			marker(bw, markers[si%len(markers)], x(i), y(v), col)
			fmt.Fprintln(bw, `</g>`)
		}
	}
	return svgEnd(w, &b, bw)
}

func (c *LineChart) nonNegative() bool {
	for _, l := range c.Levels {
		if l.Value < 0 {
			return false
		}
	}
	for _, s := range c.Series {
		for _, v := range s.Values {
			if v < 0 {
				return false
			}
		}
	}
	return true
}

func ciAt(cis []float64, i int) float64 {
	if i < len(cis) && !math.IsNaN(cis[i]) {
		return math.Abs(cis[i])
	}
	return 0
}

func marker(w io.Writer, shape string, x, y float64, color string) {
	switch shape {
	case "square":
		fmt.Fprintf(w, `<rect x="%.1f" y="%.2f" width="8" height="8" fill="%s" stroke="white" stroke-width="1"/>`, x-4, y-4, color)
	case "diamond":
		fmt.Fprintf(w, `<path d="M %.1f %.2f l 5 5 l -5 5 l -5 -5 z" fill="%s" stroke="white" stroke-width="1"/>`, x, y-5, color)
	case "triangle":
		fmt.Fprintf(w, `<path d="M %.1f %.2f l 5 9 l -10 0 z" fill="%s" stroke="white" stroke-width="1"/>`, x, y-5, color)
	default:
		fmt.Fprintf(w, `<circle cx="%.1f" cy="%.2f" r="4.5" fill="%s" stroke="white" stroke-width="1"/>`, x, y, color)
	}
	fmt.Fprintln(w)
}

// rangeTicks returns 1, 2 or 5 × 10^k steps covering [lo, hi], about 5 to 10.
func rangeTicks(lo, hi float64) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9; v += step {
		ts = append(ts, math.Round(v/step)*step)
	}
	if ts[len(ts)-1] < hi {
		ts = append(ts, ts[len(ts)-1]+step)
	}
	return ts
}

func fmtTick(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func fmtValue(v, ci float64, unit string) string {
	s := fmt.Sprintf("%.4g", v)
	if ci > 0 {
		s += fmt.Sprintf(" ± %.2g", ci)
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}
