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
	if len(wins) != windows || called != 8 {
		t.Errorf("%d windows, %d functions called; want %d and 8 (the start-up function is before the window)", len(wins), called, windows)
	}
	for i, win := range wins {
		if got := win.Selected[p.Expanded]; !reflect.DeepEqual(got, []string{"f6", "f7"}) {
			t.Errorf("window %d selects %v, want [f6 f7]", i, got)
		}
		if want := from.Add(time.Duration(i) * time.Second); !win.From.Equal(want) {
			t.Errorf("window %d from %v, want %v", i, win.From, want)
		}
	}
	if got := truth[p.Expanded]; !reflect.DeepEqual(got, []string{"f6", "f7"}) {
		t.Errorf("ground truth of %q: %v, want [f6 f7] (the whole trace's below)", p.Expanded, got)
	}
	if pr, rc := truthAgreement(wins, p.Expanded, truth[p.Expanded]); pr != 1 || rc != 1 {
		t.Errorf("windows against their consensus: precision %v, recall %v, want 1 and 1", pr, rc)
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

func TestConsensus(t *testing.T) {
	const f = "filter"
	win := func(fs ...string) TruthWindow { return TruthWindow{Selected: map[string][]string{f: fs}} }
	for _, tc := range []struct {
		windows []TruthWindow
		want    []string
	}{
		{[]TruthWindow{win("a", "b"), win("a"), win("a", "c")}, []string{"a"}},
		{[]TruthWindow{win("a", "b"), win("b")}, []string{"b"}}, // a in half: not a majority
		{[]TruthWindow{win(), win("a")}, []string{}},
		{nil, []string{}},
	} {
		if got := consensus(tc.windows, f); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("consensus of %v = %v, want %v", tc.windows, got, tc.want)
		}
	}
}
