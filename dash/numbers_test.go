package dash

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDurations: the page writes how long a program has been up, or a trace
// spans, as a duration in Go's style, rounded to what is meaningful: never
// as a clock (12:37 reads as a time of day).
func TestDurations(t *testing.T) {
	dur := funcs["dur"].(func(time.Duration) string)
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "–"},
		{850 * time.Millisecond, "850ms"},
		{45 * time.Second, "45s"},
		{45*time.Second + 400*time.Millisecond, "45.4s"},
		{12*time.Minute + 37*time.Second, "12m37s"},
		{12*time.Minute + 36*time.Second + 600*time.Millisecond, "12m37s"},
		{12*time.Minute + 5*time.Second, "12m05s"},
		{60 * time.Minute, "1h00m"},
		{3*time.Hour + 4*time.Minute + 29*time.Second, "3h04m"},
		{3*time.Hour + 59*time.Minute + 31*time.Second, "4h00m"},
		{50*time.Hour + 10*time.Minute, "50h10m"},
	} {
		if got := dur(c.d); got != c.want {
			t.Errorf("dur(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestPageCountsExact renders a page whose every count is in the thousands:
// each is written exactly, with thousands separators, as the functions
// table's calls are (843,338, not 843k nor 843338), in the text and in the
// charts' titles alike.
func TestPageCountsExact(t *testing.T) {
	const big = 843338
	row := FuncRow{ID: 7, Signature: "example.com/app.F(int) error", File: "f.go", Line: 12, Mode: "coarse",
		Calls: big, Errors: big, Panics: big, TotalNs: 1e9, MeanNs: 1000, StdDevNs: 10,
		Dist:   &Dist{N: big, P50: 900, P95: 1500, P99: 2000, Max: 3000, Bins: []Bin{{Lo: 800, Hi: 1600, Count: big}}},
		Series: []float64{big, big}, SeriesMean: []float64{1000, 1000}, Pattern: "execution(* example.com/app.F(..))"}
	part := Partition{Criterion: "frequent", Metric: "count", Direction: "most", Method: "quantiles", N: big, Excluded: big,
		Counts: [5]int{big, big, big, big, big}, Cuts: []string{"1", "2", "3", "4"}}
	cycle := Cycle{Seq: 3, At: time.Unix(5, 0), Trigger: "timer", Window: "10s", Candidates: big,
		Selected: []string{row.Signature}, Reasons: map[string][]string{}, Partitions: []Partition{part}}
	trace := TraceRow{ID: 9, Root: row.Signature, DurNs: 1e6, Calls: big, Errors: big, Panics: big, Kind: "slowest"}
	nodes := []TraceNode{{Signature: row.Signature, DurNs: 1e6, SelfNs: 1e6}, {Signature: row.Signature, Depth: 1, Missing: big, DurNs: 1, SelfNs: 1}}
	for _, live := range []bool{true, false} {
		v := &View{
			Live: live, Target: "127.0.0.1:70", Title: "app", At: time.Unix(10, 0), Refresh: 3 * time.Second,
			Process: Process{PID: 42, Go: "go1.26", Uptime: 757 * time.Second, Span: 757 * time.Second, Probes: big,
				ModeCounts: map[string]int{"coarse": big, "fine": big}, Sampling: "100%"},
			Functions: Functions{Rows: []FuncRow{row}, Count: big, Sort: "total", All: true, Controls: Controls{Enabled: true}},
			Analyzer: Analyzer{Phase: "Phase 1", Last: &cycle, Cycles: []Cycle{cycle},
				Timeline: Timeline{Cycles: []int{3}, Rows: []string{row.Signature}, Cells: [][]bool{{true}}, More: big}},
			Modes:  Modes{Recorded: big, Controls: Controls{Enabled: true}},
			Traces: Traces{List: []TraceRow{trace}, Shown: &TraceDetail{TraceRow: trace, GID: 5, Nodes: nodes}},
			Writer: Writer{Active: true, File: "/x.tgr", Written: big, Dropped: big, Queued: big, Files: big, Errors: big,
				WrittenSeries: []float64{big}, DroppedSeries: []float64{big}, QueuedSeries: []float64{big}, Gaps: big, Skipped: 10, Losses: big},
		}
		var b bytes.Buffer
		if err := page().ExecuteTemplate(&b, "page", v); err != nil {
			t.Fatal(err)
		}
		// The text a reader sees: between tags, and in titles and labels.
		var text strings.Builder
		for _, m := range regexp.MustCompile(`>([^<]*)<|(?:title|aria-label)="([^"]*)"`).FindAllStringSubmatch(b.String(), -1) {
			if f := strings.Join(strings.Fields(html.UnescapeString(m[1]+m[2])), " "); f != "" {
				text.WriteString(f + "\n")
			}
		}
		page := text.String()
		if !strings.Contains(page, "843,338") {
			t.Fatalf("live %v: the page shows no 843,338:\n%s", live, page)
		}
		for _, re := range []string{`\d{4,}`, `\d+(\.\d+)?[kMG]\b`} {
			for _, m := range regexp.MustCompile(re).FindAllStringIndex(page, -1) {
				t.Errorf("live %v: count written %q: …%s…", live, page[m[0]:m[1]], page[max(m[0]-60, 0):min(m[1]+30, len(page))])
			}
		}
		if live && !strings.Contains(page, "12m37s") {
			t.Errorf("the Up card does not say 12m37s")
		}
	}
}
