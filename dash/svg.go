package dash

import (
	"fmt"
	"hash/fnv"
	"html"
	"html/template"
	"math"
	"strings"

	"github.com/tigrisgo/tigris/internal/human"
)

// The charts, drawn on the server as inline SVG: no script draws anything,
// so the page shows them without JavaScript and on the first paint. Colours
// come from the style sheet through classes (dash.css), which keeps them in
// one place, follows the light or dark scheme and passes the page's Content
// Security Policy, which allows no inline style.

// svgText escapes s for SVG text and attributes.
func svgText(s string) string { return html.EscapeString(s) }

// f1 prints a coordinate with one decimal.
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// sparkline draws values (oldest first) as a line over a filled area; means,
// when given, go into each point's tooltip.
func sparkline(values, means []float64, unit string) template.HTML {
	const w, h = 100.0, 24.0
	if len(values) == 0 {
		return template.HTML(`<span class="muted" title="no window yet">–</span>`)
	}
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	x := func(i int) float64 {
		if len(values) == 1 {
			return w
		}
		return float64(i) * w / float64(len(values)-1)
	}
	y := func(v float64) float64 {
		if top == 0 {
			return h - 1
		}
		return h - 1 - v/top*(h-3)
	}
	var line, pts strings.Builder
	for i, v := range values {
		fmt.Fprintf(&line, "%s,%s ", f1(x(i)), f1(y(v)))
	}
	last := values[len(values)-1]
	label := fmt.Sprintf("%s %s in the last window, at most %s per window over %d windows", countOf(last), unit, countOf(top), len(values))
	if n := len(means); n > 0 && means[n-1] > 0 {
		label += fmt.Sprintf("; mean %s in the last window", human.Ns(means[n-1]))
	}
	fmt.Fprintf(&pts, `<svg class="spark" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s"><title>%s</title>`,
		int(w), int(h), int(w), int(h), svgText(label), svgText(label))
	fmt.Fprintf(&pts, `<polygon class="spark-area" points="0,%s %s%s,%s"/>`, f1(h), line.String(), f1(w), f1(h))
	fmt.Fprintf(&pts, `<polyline class="spark-line" points="%s"/>`, strings.TrimSpace(line.String()))
	fmt.Fprintf(&pts, `<circle class="spark-dot" cx="%s" cy="%s" r="2"/></svg>`, f1(x(len(values)-1)), f1(y(last)))
	return template.HTML(pts.String())
}

// countOf writes a sparkline's value, a count per window, as the page writes
// every count: exactly, with thousands separators.
func countOf(v float64) string { return anyCount(int64(math.Round(v))) }

// histogram draws a latency distribution: one bar per bin on a log scale of
// durations, with marks at p50, p95 and p99.
func histogram(d *Dist) template.HTML {
	const w, h = 120.0, 26.0
	if d == nil || len(d.Bins) == 0 {
		return template.HTML(`<span class="muted" title="no recorded calls: switch the function to fine to see its distribution">–</span>`)
	}
	var top uint64
	for _, b := range d.Bins {
		top = max(top, b.Count)
	}
	bw := w / float64(len(d.Bins))
	label := fmt.Sprintf("latency of %s recorded calls from %s to %s; p50 %s, p95 %s, p99 %s",
		count(d.N), human.Ns(d.Bins[0].Lo), human.Ns(d.Max), human.Ns(d.P50), human.Ns(d.P95), human.Ns(d.P99))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="hist" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s"><title>%s</title>`,
		int(w), int(h), int(w), int(h), svgText(label), svgText(label))
	for i, bin := range d.Bins {
		bh := float64(bin.Count) / float64(top) * (h - 4)
		if bin.Count > 0 {
			bh = max(bh, 1)
		}
		// No tooltip per bar: twenty-four elements more per row would
		// double the page's weight for what the quantile marks tell.
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s"/>`, f1(float64(i)*bw+0.5), f1(h-bh), f1(max(bw-1, 0.5)), f1(bh))
	}
	// Quantile marks: where the value falls among the bins.
	pos := func(v float64) float64 {
		for i, bin := range d.Bins {
			if v <= bin.Hi {
				frac := 0.5
				if bin.Hi > bin.Lo {
					frac = (math.Log(max(v, 1)) - math.Log(max(bin.Lo, 1))) / (math.Log(max(bin.Hi, 1)+1) - math.Log(max(bin.Lo, 1)))
				}
				return (float64(i) + min(max(frac, 0), 1)) * bw
			}
		}
		return w
	}
	for _, q := range []struct {
		name string
		v    float64
	}{{"p50", d.P50}, {"p95", d.P95}, {"p99", d.P99}} {
		fmt.Fprintf(&b, `<line class="mark %s" x1="%s" x2="%s" y1="0" y2="%d"><title>%s %s</title></line>`, q.name, f1(pos(q.v)), f1(pos(q.v)), int(h), q.name, human.Ns(q.v))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// levelNames are the five groups, in the criterion's order.
var levelNames = [5]string{"least", "less", "plain", "more", "most"}

// partitionBar draws one criterion's five groups as a bar of five segments
// as wide as their counts, each labelled.
func partitionBar(p Partition) template.HTML {
	const w, h = 420.0, 24.0
	n := 0
	for _, c := range p.Counts {
		n += c
	}
	var b strings.Builder
	label := fmt.Sprintf("%s (%s): least %s, less %s, plain %s, more %s, most %s", p.Criterion, p.Metric,
		anyCount(p.Counts[0]), anyCount(p.Counts[1]), anyCount(p.Counts[2]), anyCount(p.Counts[3]), anyCount(p.Counts[4]))
	fmt.Fprintf(&b, `<svg class="parts" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s"><title>%s</title>`,
		int(w), int(h), int(w), int(h), svgText(label), svgText(label))
	if n == 0 {
		fmt.Fprintf(&b, `<rect class="lvl-empty" x="0" y="0" width="%d" height="%d"/><text x="6" y="16">no value grouped</text></svg>`, int(w), int(h))
		return template.HTML(b.String())
	}
	x := 0.0
	for i, c := range p.Counts {
		if c == 0 {
			continue
		}
		sw := float64(c) / float64(n) * w
		tip := fmt.Sprintf("%s %s: %s function(s)", levelNames[i], p.Criterion, anyCount(c))
		fmt.Fprintf(&b, `<rect class="lvl%d" x="%s" y="0" width="%s" height="%d"><title>%s</title></rect>`, i, f1(x), f1(sw), int(h), svgText(tip))
		if txt := levelNames[i] + " " + anyCount(c); sw > float64(len(txt))*6.5+6 {
			fmt.Fprintf(&b, `<text class="lvl-text%d" x="%s" y="16">%s</text>`, i, f1(x+4), txt)
		} else if sw > 14 {
			fmt.Fprintf(&b, `<text class="lvl-text%d" x="%s" y="16">%s</text>`, i, f1(x+3), anyCount(c))
		}
		x += sw
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// timelineGrid draws which functions each cycle selected: one row per
// function, one column per cycle, a filled cell where it was selected.
func timelineGrid(t Timeline) template.HTML {
	if len(t.Cycles) == 0 {
		return ""
	}
	const cell, gap, labelW = 12.0, 2.0, 260.0
	cols := len(t.Cycles)
	w := labelW + float64(cols)*(cell+gap)
	h := float64(len(t.Rows))*(cell+gap) + 16
	var b strings.Builder
	label := fmt.Sprintf("selections of %d cycles: %s functions selected at least once", cols, anyCount(len(t.Rows)))
	fmt.Fprintf(&b, `<svg class="timeline" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s"><title>%s</title>`,
		f1(w), f1(h), f1(w), f1(h), svgText(label), svgText(label))
	for c, seq := range t.Cycles {
		if c == 0 || c == cols-1 || cols <= 20 || c%5 == 0 {
			fmt.Fprintf(&b, `<text class="axis" x="%s" y="10">%d</text>`, f1(labelW+float64(c)*(cell+gap)), seq)
		}
	}
	for r, sig := range t.Rows {
		y := 16 + float64(r)*(cell+gap)
		fmt.Fprintf(&b, `<text class="row-label" x="0" y="%s">%s<title>%s</title></text>`, f1(y+cell-2), svgText(clip(shortName(sig), 40)), svgText(sig))
		for c, on := range t.Cells[r] {
			cls := "cell-off"
			state := "not selected"
			if on {
				cls, state = "cell-on", "selected"
			}
			fmt.Fprintf(&b, `<rect class="%s" x="%s" y="%s" width="%d" height="%d"><title>cycle %d: %s %s</title></rect>`,
				cls, f1(labelW+float64(c)*(cell+gap)), f1(y), int(cell), int(cell), t.Cycles[c], svgText(clip(shortName(sig), 40)), state)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// clip shortens s to n characters with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}

// flameClasses is how many colour classes the flame graph has (dash.css).
const flameClasses = 6

// flameGraph draws a call tree as an icicle: the root on top, each call
// under its caller, as wide as its duration; colours tell functions apart
// (and labels and tooltips name them, so nothing depends on colours).
func flameGraph(d *TraceDetail) template.HTML {
	if d == nil || len(d.Nodes) == 0 || d.DurNs <= 0 {
		return ""
	}
	const w, row = 800.0, 18.0
	depth := 0
	for _, n := range d.Nodes {
		depth = max(depth, n.Depth)
	}
	h := float64(depth+1) * row
	var b strings.Builder
	label := fmt.Sprintf("flame graph of trace %d: %s calls over %s", d.ID, anyCount(len(d.Nodes)), human.Ns(d.DurNs))
	fmt.Fprintf(&b, `<svg class="flame" viewBox="0 0 %d %s" role="img" aria-label="%s"><title>%s</title>`, int(w), f1(h), svgText(label), svgText(label))
	colour := make([]int, len(d.Nodes))
	for i, n := range d.Nodes {
		x := n.StartNs / d.DurNs * w
		nw := max(n.DurNs/d.DurNs*w, 0.5)
		y := float64(n.Depth) * row
		hf := fnv.New32a()
		hf.Write([]byte(funcName(n.Signature)))
		colour[i] = int(hf.Sum32() % flameClasses)
		if n.Parent >= 0 && n.Parent < i && colour[n.Parent] == colour[i] {
			colour[i] = (colour[i] + 1) % flameClasses // never the caller's colour
		}
		cls := fmt.Sprintf("f%d", colour[i])
		if n.Error || n.Panic {
			cls += " failed"
		}
		tip := fmt.Sprintf("%s\n%s, self %s", n.Signature, human.Ns(n.DurNs), human.Ns(n.SelfNs))
		if n.Missing > 0 {
			tip += fmt.Sprintf(", %s unrecorded call level(s) above", anyCount(n.Missing))
		}
		if n.Error {
			tip += ", returned an error"
		}
		if n.Panic {
			tip += ", panicked"
		}
		fmt.Fprintf(&b, `<g><rect class="%s" x="%s" y="%s" width="%s" height="%s"/>`, cls, f1(x), f1(y), f1(nw), f1(row-1))
		if chars := int((nw - 6) / 6.7); chars >= 3 {
			fmt.Fprintf(&b, `<text x="%s" y="%s">%s</text>`, f1(x+3), f1(y+13), svgText(clip(shortName(n.Signature), chars)))
		}
		fmt.Fprintf(&b, `<title>%s</title></g>`, svgText(tip))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
