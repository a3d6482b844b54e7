package bench

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
)

// portionColors are the fills of the stacked segments.
var portionColors = map[Portion]string{
	PortionT:    "#bdbdbd",
	PortionI:    "#4e79a7",
	PortionC:    "#f28e2b",
	PortionW:    "#e15759",
	PortionPeer: "#59a14f",
}

var portionLabels = []struct {
	p    Portion
	text string
}{
	{PortionT, "T method"},
	{PortionI, "I instrumentation"},
	{PortionC, "C collecting"},
	{PortionW, "W writing"},
	{PortionPeer, "peer overhead"},
}

// WriteSVG draws e as a stacked bar chart in the style of the thesis' figures:
// one bar per configuration, stacked from the median cost of T and of every
// portion of its chain, per monitored call, each segment labelled; the mean with
// its 95 % confidence interval and the quartiles under each bar. Two things are
// drawn shortened, with a break mark and their true value, so that the
// overheads stay visible: T when it is much larger than every overhead (a long
// method time), and the peer's overhead when it is much larger than every other
// configuration's. Negative portions (measurement noise) are drawn as zero and
// labelled with their value. Under a bar whose writer dropped records (or spans)
// the share it dropped is given.
func WriteSVG(w io.Writer, e *ExperimentSummary) error {
	const (
		left, right   = 100.0, 40.0
		slot, barW    = 150.0, 56.0
		top, plotH    = 110.0, 300.0
		bottomLabels  = 80.0
		titleY, subY  = 24.0, 44.0
		legendY       = 70.0
		breakFraction = 0.2 // of plotH, for a shortened T
		labelGap      = 11.0
	)
	n := len(e.Configs)
	width := max(left+right+slot*float64(max(n, 1)), 720)
	height := top + plotH + bottomLabels
	depth := float64(max(e.Params.Depth, 1))

	type bar struct {
		c    *ConfigSummary
		segs []Segment
		over float64 // the sum of the drawn (non-negative) overhead segments
	}
	bars := make([]bar, n)
	var tMax, overMax, peerMax float64
	for i := range e.Configs {
		c := &e.Configs[i]
		bars[i] = bar{c: c, segs: e.Segments(c)}
		for _, s := range bars[i].segs {
			if s.Portion == PortionT {
				tMax = max(tMax, s.Ns)
			} else {
				bars[i].over += max(s.Ns, 0)
			}
		}
		if c.Adds == PortionPeer {
			peerMax = max(peerMax, bars[i].over)
		} else {
			overMax = max(overMax, bars[i].over)
		}
	}
	// The scale is set by the overheads of the configurations under test; a
	// peer far above them is cut.
	peerCut := overMax > 0 && peerMax > 1.5*overMax
	if !peerCut {
		overMax = max(overMax, peerMax)
	}
	tBroken := overMax > 0 && tMax > 2*overMax
	var tScale, oScale float64 // pixels per ns of T and of overhead
	if tBroken {
		tScale = breakFraction * plotH / tMax
		oScale = (1 - breakFraction) * plotH / overMax
	} else {
		tScale = plotH / max(tMax+overMax, 1e-9)
		oScale = tScale
	}
	base := top + plotH
	axisX := left - 10

	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	q := e.Params
	text(bw, left, titleY, "start", `font-size="15" font-weight="bold"`,
		fmt.Sprintf("MooBench %s: median response time per monitored call", e.Name))
	text(bw, left, subY, "start", `fill="#444"`,
		fmt.Sprintf("depth %d, method time %v, %d run(s) × %d call(s), first %.0f%% discarded; clock pair %.2f ns",
			q.Depth, q.MethodTime, q.Runs, q.Calls, 100*q.Warmup, e.ClockPairNs))
	x := left
	for _, l := range portionLabels {
		fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s" stroke="#333" stroke-width="0.5"/>`+"\n", x, legendY-10, portionColors[l.p])
		text(bw, x+16, legendY, "start", "", l.text)
		x += 16 + 6.5*float64(len(l.text)) + 18
	}

	// Axes and grid.
	line(bw, axisX, top, axisX, base, "#333")
	line(bw, axisX, base, width-right, base, "#333")
	text(bw, 14, top+plotH/2, "middle", fmt.Sprintf(`transform="rotate(-90 14 %.1f)"`, top+plotH/2), "ns per monitored call")
	if tBroken {
		yb := base - tScale*tMax
		text(bw, axisX-4, base+4, "end", "", "0")
		text(bw, axisX-4, yb+4, "end", "", "T = "+fmtNs(tMax))
		breakMark(bw, axisX-5, yb+breakFraction*plotH*0.4, 10, "#333")
		for _, v := range niceTicks(overMax)[1:] {
			y := yb - oScale*v
			line(bw, axisX, y, width-right, y, "#ddd")
			text(bw, axisX-4, y+4, "end", "", "T+"+fmtNs(v))
		}
	} else {
		for _, v := range niceTicks(tMax + overMax) {
			y := base - tScale*v
			line(bw, axisX, y, width-right, y, "#ddd")
			label := fmtNs(v)
			if v == 0 {
				label = "0"
			}
			text(bw, axisX-4, y+4, "end", "", label)
		}
	}

	for i, br := range bars {
		cx := left + slot*float64(i) + slot/2
		bx := cx - barW/2
		y := base
		labelY := base + labelGap // the last label put beside the bar
		var total float64
		for _, s := range br.segs {
			total += s.Ns
			h := max(s.Ns, 0) * oScale
			cut := false
			switch {
			case s.Portion == PortionT:
				h = max(s.Ns, 0) * tScale
				cut = tBroken
			case s.Portion == PortionPeer && peerCut:
				h = (1 - breakFraction) * plotH
				if !tBroken {
					h = plotH - tScale*tMax
				}
				cut = true
			}
			fmt.Fprintf(bw, `<rect x="%.1f" y="%.2f" width="%.1f" height="%.2f" fill="%s" stroke="#333" stroke-width="0.5"><title>%s</title></rect>`+"\n",
				bx, y-h, barW, h, portionColors[s.Portion], escape(fmt.Sprintf("%s adds %s: %s", s.Config, s.Portion, fmtNs(s.Ns))))
			if cut {
				breakMark(bw, bx-2, y-h*0.35, barW+4, "white")
			}
			label := fmt.Sprintf("%s %s", s.Portion, fmtNs(s.Ns))
			if h >= 14 {
				text(bw, cx, y-h*0.65+4, "middle", "", label)
			} else {
				// Beside the bar, stacked upwards without overlapping.
				ly := min(y-h/2+3, labelY-labelGap)
				text(bw, bx+barW+4, ly, "start", `font-size="9"`, label)
				labelY = ly
			}
			y -= h
		}
		text(bw, cx, min(y, labelY-labelGap+3)-5, "middle", `font-weight="bold"`, fmtNs(total))
		st := br.c.Stats
		text(bw, cx, base+16, "middle", `font-weight="bold"`, br.c.Name)
		text(bw, cx, base+31, "middle", `font-size="9"`,
			fmt.Sprintf("mean %s ± %s", fmtNs(st.Mean/depth), fmtNs(st.CI95/depth)))
		text(bw, cx, base+44, "middle", `font-size="9"`,
			fmt.Sprintf("Q1–Q3 %s – %s", fmtNs(st.Q1/depth), fmtNs(st.Q3/depth)))
		if br.c.VsPeer != 0 && br.c.Name != e.Peer {
			text(bw, cx, base+57, "middle", `font-size="9"`, fmt.Sprintf("%.3f of the peer's overhead", br.c.VsPeer))
		}
		// A writer that drops looks cheaper than it is: say how much it dropped.
		if t := br.c.Trace; t != nil && t.Lost > 0 {
			text(bw, cx, base+70, "middle", `font-size="9" fill="#b00"`, fmt.Sprintf("%.2f %% of the %s lost", 100*t.LostShare(), t.Unit))
		}
	}
	fmt.Fprintln(bw, "</svg>")
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func line(w io.Writer, x1, y1, x2, y2 float64, stroke string) {
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x1, y1, x2, y2, stroke)
}

// breakMark draws two parallel slanted strokes across a bar or axis at y.
func breakMark(w io.Writer, x, y, width float64, stroke string) {
	fmt.Fprintf(w, `<path d="M %.1f %.1f l %.1f -5 M %.1f %.1f l %.1f -5" stroke="%s" stroke-width="2" fill="none"/>`+"\n",
		x, y, width, x, y+5, width, stroke)
}

func text(w io.Writer, x, y float64, anchor, attrs, s string) {
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, escape(s))
}

func escape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// niceTicks returns 1, 2 or 5 × 10^k steps from 0 up to about max, at most 6.
func niceTicks(maxV float64) []float64 {
	if maxV <= 0 || math.IsNaN(maxV) || math.IsInf(maxV, 0) {
		return []float64{0}
	}
	raw := maxV / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := 0.0; v <= maxV*1.0001; v += step {
		ts = append(ts, v)
	}
	return ts
}

// svgStart opens a chart of width × height on a white background, with its
// title and subtitle at x, titleY and subY.
func svgStart(w io.Writer, width, height, x, titleY, subY float64, title, subtitle string) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`+"\n",
		width, height, width, height)
	fmt.Fprintf(w, `<rect x="0" y="0" width="%.0f" height="%.0f" fill="white"/>`+"\n", width, height)
	text(w, x, titleY, "start", `font-size="15" font-weight="bold"`, title)
	text(w, x, subY, "start", `fill="#444"`, subtitle)
}

// svgEnd closes the chart bw writes into b and hands it to w whole.
func svgEnd(w io.Writer, b *bytes.Buffer, bw *bufio.Writer) error {
	fmt.Fprintln(bw, "</svg>")
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// axes draws a plot's horizontal grid at ticks, labelled on the left, and its
// left and bottom axes; y maps a value to its height.
func axes(w io.Writer, ticks []float64, y func(float64) float64, label func(float64) string, left, top, plotW, plotH float64) {
	for _, v := range ticks {
		yy := y(v)
		line(w, left, yy, left+plotW, yy, "#e3e3e3")
		text(w, left-6, yy+4, "end", "", label(v))
	}
	line(w, left, top, left, top+plotH, "#333")
	line(w, left, top+plotH, left+plotW, top+plotH, "#333")
}
