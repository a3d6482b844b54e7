package evaluation

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/offline"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestGroundTruthPerWindow: the ground truth is what the offline analyzer
// selects in the analysis windows of the truth run's measured window, as the
// live analyzer sees its statistics, not over the whole trace. The trace
// here has eight functions called ten times a second: seven return sizes of
// a steady spread (1 to 7), one returns a growing number, as an insert
// returns a new row's id, whose spread over one second is about 3 but over
// the whole trace about 12; and a start-up function before the measured
// window with the widest spread of all. "less changeable" (the widest
// spreads) selects f6 and f7 in every one-second window, and f7, the inserts
// with the start-up function over the whole trace.
func TestGroundTruthPerWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "truth.tgr")
	base := time.Unix(1_000_000, 0)
	w, err := writer.NewSync(writer.Options{Path: path, Clock: writer.ClockBase{Wall: base.UnixNano()}})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"startup", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "insert"}
	for i, n := range names {
		w.Define(writer.ProbeDef{ID: uint32(i + 1), Signature: n})
	}
	rec := func(id uint32, at, size int64) {
		w.Write(&writer.Record{Probe: id, TIn: at, TOut: at + 1000, Flags: writer.FlagSize, Size: size})
	}
	// Start-up, in the first second: the measured window starts after it.
	for j := range 10 {
		rec(1, int64(j)*int64(time.Millisecond), int64(j%2)*1000)
	}
	from := base.Add(time.Second)
	const windows, calls = 4, 10
	id := int64(0)
	for s := range windows {
		for j := range calls {
			at := int64(time.Second) + int64(s)*int64(time.Second) + int64(j)*int64(90*time.Millisecond)
			for f := 1; f <= 7; f++ {
				sign := int64(1 - 2*(j%2))
				rec(uint32(f+1), at, 100+sign*int64(f))
			}
			id++
			rec(9, at, id)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := Plan{Interval: settings.Duration(time.Second), Restricted: "most changeable", Expanded: "less changeable"}
	to := from.Add(windows*time.Second + 500*time.Millisecond) // a partial window at the end is not one
	truth, wins, called, err := groundTruth(path, p, from, to)
	if err != nil {
		t.Fatal(err)
	}
	// Windows of one second every 200 ms from a second before from, the
	// last ending by to: 23, of which 18 start in the measured window.
	if len(wins) != 23 || called != 8 {
		t.Errorf("%d windows, %d functions called; want 23 and 8 (the start-up function is before the window)", len(wins), called)
	}
	for i, win := range wins {
		if want := from.Add(time.Duration(i)*200*time.Millisecond - time.Second); !win.From.Equal(want) {
			t.Errorf("window %d from %v, want %v", i, win.From, want)
		}
		if got := win.Selected[p.Expanded]; !win.From.Before(from) && !reflect.DeepEqual(got, []string{"f6", "f7"}) {
			t.Errorf("window %d selects %v, want [f6 f7]", i, got)
		}
	}
	if got := truth[p.Expanded]; !reflect.DeepEqual(got, []string{"f6", "f7"}) {
		t.Errorf("ground truth of %q: %v, want [f6 f7] (the whole trace's below)", p.Expanded, got)
	}
	r := &RunResult{Truth: truth, TruthWindows: wins, WindowStart: from}
	if pr, rc, n := truthAgreement(r, p.Expanded); pr != 1 || rc != 1 || n != 18 {
		t.Errorf("the consensus against its %d windows: precision %v, recall %v, want 18, 1 and 1", n, pr, rc)
	}
	// The premise: over the whole trace the filter selects otherwise.
	stats, err := offline.AggregateTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := analyzer.Evaluate(stats, settings.Analysis{Criteria: p.Expanded, Metrics: metricBinding})
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, s := range ev.Selected() {
		whole = append(whole, s.Signature)
	}
	if !reflect.DeepEqual(whole, []string{"startup", "f7", "insert"}) {
		t.Errorf("premise: the whole trace selects %v, want [startup f7 insert]", whole)
	}
}

// TestJudgeAligned: each live cycle is judged against its round's truth
// window that lies where the cycle looked. The truth run here selects a and
// b in its first second (the new users' start) and a alone after it, so its
// consensus is {a}; the live run's first cycle looked at its first second
// and selected a and b, its second cycle a: both right. Against the
// consensus the first would count half wrong.
func TestJudgeAligned(t *testing.T) {
	const filter = "more frequent"
	p := Plan{Interval: settings.Duration(time.Second), Restricted: "most frequent", Expanded: filter}
	p.Configs = []Config{
		{Name: "truth", Kind: KindTruth, Scope: ScopeModule},
		{Name: "expanded-100", Kind: KindExpanded, Scope: ScopeModule, Filter: filter, Sampling: 100},
	}
	base := time.Unix(1000, 0)
	truth := RunResult{Config: "truth", Run: 1, WindowStart: base, Truth: map[string][]string{filter: {"a"}}}
	for i := range 30 { // from one second before the measured window, every 200 ms
		from := base.Add(time.Duration(i)*200*time.Millisecond - time.Second)
		sel := []string{"a"}
		if from.Sub(base) >= -100*time.Millisecond && from.Sub(base) < 600*time.Millisecond {
			sel = []string{"a", "b"}
		}
		truth.TruthWindows = append(truth.TruthWindows, TruthWindow{From: from, Selected: map[string][]string{filter: sel}})
	}
	live := RunResult{Config: "expanded-100", Run: 1, WindowStart: base.Add(time.Hour), Cycles: []Cycle{
		{At: base.Add(time.Hour + time.Second + 30*time.Millisecond), Functions: []string{"a", "b"}},
		{At: base.Add(time.Hour + 2*time.Second + 30*time.Millisecond), Functions: []string{"a"}},
	}}
	sum := &Summary{Plan: p, Runs: []RunResult{truth, live}}
	q, ok := judge(sum, p.Configs[1])
	if !ok || q.Cycles != 2 || q.Aligned != 2 || q.Precision != 1 || q.Recall != 1 {
		t.Errorf("aligned: %+v, want 2 cycles aligned, precision 1, recall 1", q)
	}
	if q.ConsensusPrecision != 0.75 || q.ConsensusRecall != 1 {
		t.Errorf("against the consensus: precision %v, recall %v, want 0.75 and 1", q.ConsensusPrecision, q.ConsensusRecall)
	}
	// Without the windows' starts (a summary.json of an older run) the
	// consensus judges.
	sum.Runs[1].WindowStart = time.Time{}
	if q, _ := judge(sum, p.Configs[1]); q.Aligned != 0 || q.Precision != 0.75 {
		t.Errorf("no window start: %+v, want the consensus's precision 0.75", q)
	}
}
