package analyzer

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// testSettings are the settings of every test's probes (the first Register
// applies them): everything coarse, records discarded, and one configured rule
// that switches a probe off, which the analyzer must leave off.
const testSettings = `{"format":1,"mode":"coarse","sampling":1,` +
	`"rules":[{"pattern":"execution(* test.example/offcfg.Fa(..))","mode":"off"}],` +
	`"writer":{"mode":"null","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"1m"}}`

// newProbes registers n fresh probes named Fa, Fb, ... in package pkg.
func newProbes(t testing.TB, pkg string, n int) []monitor.Probe {
	t.Helper()
	probes := make([]monitor.Probe, n)
	infos := make([]monitor.ProbeInfo, n)
	for i := range infos {
		infos[i] = monitor.ProbeInfo{Package: pkg, Name: "F" + string(rune('a'+i)), Results: []string{"error"}, File: pkg + "/f.go", Line: 10 + i}
	}
	monitor.Register(testSettings, probes, infos)
	startLoop.Do(func() { go Run() }) // what monitor.Links.Analyzer does in a tigris build
	return probes
}

var startLoop sync.Once

func call(p *monitor.Probe, err error) {
	if c := monitor.Enter(p); c.On() {
		defer c.Exit(err)
	}
}

// modeOf is the mode probe p is in.
func modeOf(t testing.TB, p *monitor.Probe) settings.Mode {
	t.Helper()
	for _, s := range monitor.Snapshot() {
		if s.ID == p.ID() {
			return s.Mode
		}
	}
	t.Fatalf("probe %d is not registered", p.ID())
	return ""
}

// useAnalysis sets a for the test and restores the previous settings, rules and
// analyzer choices afterwards.
func useAnalysis(t testing.TB, a settings.Analysis) {
	t.Helper()
	before := Analysis()
	if err := SetAnalysis(a); err != nil {
		t.Fatalf("SetAnalysis(%+v): %v", a, err)
	}
	t.Cleanup(func() {
		before.Enabled = false // also drops the analyzer's choices
		if err := SetAnalysis(before); err != nil {
			t.Errorf("restoring analysis settings: %v", err)
		}
		_ = monitor.SetRules(nil)
	})
}

// manual analyses only when asked: a 1 ns window, so each cycle sees exactly the
// calls since the previous one, and an interval the test never reaches.
func manual(criteria string) settings.Analysis {
	return settings.Analysis{
		Criteria: criteria,
		Interval: settings.Duration(time.Hour),
		Window:   settings.Duration(1),
	}
}

func analyze(t *testing.T) Cycle {
	t.Helper()
	c, err := AnalyzeNow()
	if err != nil {
		t.Fatalf("AnalyzeNow: %v", err)
	}
	return c
}

// callN calls probe p n times (the counts are what "frequent" sees).
func callN(p *monitor.Probe, n int) {
	for left := n; left > 0; left-- {
		call(p, nil)
	}
}

func sig(pkg, name string) string { return pkg + "." + name + "() error" }

func TestAnalyzerSelectsAddsRemoves(t *testing.T) {
	const pkg = "test.example/analyze"
	ps := newProbes(t, pkg, 5)
	useAnalysis(t, manual("most frequent"))
	analyze(t) // the next window starts here: earlier tests' calls fall out

	// The paper's Table 7 frequencies: 200 is the only "most frequent".
	for i, n := range []int{200, 100, 50, 12, 2} {
		callN(&ps[i], n)
	}
	c1 := analyze(t)
	if c1.Err != "" || c1.Candidates != 5 {
		t.Fatalf("cycle 1: err %q, %d candidates; want no error, 5 candidates", c1.Err, c1.Candidates)
	}
	fa, fb := sig(pkg, "Fa"), sig(pkg, "Fb")
	if !slices.Equal(c1.Selected, []string{fa}) || !slices.Equal(c1.Added, []string{fa}) {
		t.Errorf("cycle 1: selected %q, added %q; want [%s] both", c1.Selected, c1.Added, fa)
	}
	if got := c1.Reasons[fa]; !slices.Equal(got, []string{"frequent: most (count 200)"}) {
		t.Errorf("cycle 1: reasons for Fa = %q", got)
	}
	if len(c1.Partitions) != 1 || c1.Partitions[0].Metric != "count" || c1.Partitions[0].Counts != [5]int{1, 1, 1, 1, 1} {
		t.Errorf("cycle 1: partitions %+v; want count grouped one per level", c1.Partitions)
	}
	for i, want := range []settings.Mode{settings.Fine, settings.Coarse, settings.Coarse, settings.Coarse, settings.Coarse} {
		if got := modeOf(t, &ps[i]); got != want {
			t.Errorf("after cycle 1: probe %d mode %s, want %s", i, got, want)
		}
	}

	// The workload moves: Fb becomes the most frequent.
	for i, n := range []int{10, 300, 50, 12, 2} {
		callN(&ps[i], n)
	}
	c2 := analyze(t)
	if !slices.Equal(c2.Selected, []string{fb}) || !slices.Equal(c2.Added, []string{fb}) || !slices.Equal(c2.Removed, []string{fa}) {
		t.Errorf("cycle 2: selected %q added %q removed %q; want [Fb] [Fb] [Fa]", c2.Selected, c2.Added, c2.Removed)
	}
	if modeOf(t, &ps[0]) != settings.Coarse || modeOf(t, &ps[1]) != settings.Fine {
		t.Errorf("after cycle 2: Fa %s, Fb %s; want coarse, fine", modeOf(t, &ps[0]), modeOf(t, &ps[1]))
	}
	if c2.Seq != c1.Seq+1 || c2.Trigger != "manual" || c2.Criteria != "most frequent" {
		t.Errorf("cycle 2: seq %d (after %d), trigger %q, criteria %q", c2.Seq, c1.Seq, c2.Trigger, c2.Criteria)
	}

	// A manual rule wins over the analyzer, and the cycle says so.
	if _, err := monitor.AddRule(monitor.Rule{Pattern: "execution(* " + pkg + ".Fb(..))", Mode: "coarse"}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []int{10, 300, 50, 12, 2} {
		callN(&ps[i], n)
	}
	c3 := analyze(t)
	if !slices.Equal(c3.Selected, []string{fb}) || len(c3.Added)+len(c3.Removed) != 0 {
		t.Errorf("cycle 3: selected %q added %q removed %q; want [Fb], no change", c3.Selected, c3.Added, c3.Removed)
	}
	if modeOf(t, &ps[1]) != settings.Coarse || !slices.Equal(c3.Overridden, []string{fb}) {
		t.Errorf("cycle 3: Fb mode %s, overridden %q; want coarse by the manual rule, [Fb]", modeOf(t, &ps[1]), c3.Overridden)
	}
	if err := monitor.SetRules(nil); err != nil {
		t.Fatal(err)
	}
	if modeOf(t, &ps[1]) != settings.Fine {
		t.Errorf("manual rule removed: Fb mode %s, want fine (the analyzer's choice)", modeOf(t, &ps[1]))
	}

	// A quiet window selects nothing and hands the probes back to the rules.
	c4 := analyze(t)
	if c4.Candidates != 0 || len(c4.Selected) != 0 || !slices.Equal(c4.Removed, []string{fb}) {
		t.Errorf("quiet cycle: %d candidates, selected %q, removed %q; want 0, [], [Fb]", c4.Candidates, c4.Selected, c4.Removed)
	}
	if modeOf(t, &ps[1]) != settings.Coarse {
		t.Errorf("quiet cycle: Fb mode %s, want coarse (the configured default)", modeOf(t, &ps[1]))
	}

	h := History()
	if len(h) < 5 || h[len(h)-1].Seq != c4.Seq || h[len(h)-4].Seq != c1.Seq {
		t.Fatalf("history does not end with the test's cycles: %d entries", len(h))
	}
	h[len(h)-1].Removed[0] = "changed"
	if History()[len(h)-1].Removed[0] != fb {
		t.Error("History returned shared slices")
	}
	if _, err := json.Marshal(h); err != nil {
		t.Errorf("history does not encode: %v", err)
	}
}

// TestAnalyzerExpensive uses call durations: one function sleeps, the others do
// nothing, so only its mean time can be the most expensive.
func TestAnalyzerExpensive(t *testing.T) {
	const pkg = "test.example/expensive"
	ps := newProbes(t, pkg, 5)
	useAnalysis(t, manual("most expensive"))
	analyze(t)
	for i := range ps {
		for left := 3; left > 0; left-- {
			func() {
				c := monitor.Enter(&ps[i])
				defer c.Exit(nil)
				if i == 2 {
					time.Sleep(2 * time.Millisecond)
				}
			}()
		}
	}
	c := analyze(t)
	if want := sig(pkg, "Fc"); !slices.Equal(c.Selected, []string{want}) {
		t.Errorf("selected %q; want [%s]", c.Selected, want)
	}
}

func TestAnalyzerTurnsNothingOn(t *testing.T) {
	const pkg = "test.example/offcfg"
	ps := newProbes(t, pkg, 2)
	useAnalysis(t, manual("most frequent ∪ least frequent ∪ frequent"))
	analyze(t)
	callN(&ps[0], 50)
	callN(&ps[1], 5)
	// testSettings has a configured rule that switches Fa off: the analyzer
	// must not override it, although Fa is the most frequent.
	c := analyze(t)
	if c.Candidates != 1 || modeOf(t, &ps[0]) != settings.Off {
		t.Errorf("%d candidates, Fa mode %s; want 1 candidate (Fb), Fa off", c.Candidates, modeOf(t, &ps[0]))
	}
}

func TestSetAnalysisInvalidChangesNothing(t *testing.T) {
	ps := newProbes(t, "test.example/badanalysis", 1)
	useAnalysis(t, manual("more frequent"))
	before, hist, mode := Analysis(), len(History()), modeOf(t, &ps[0])
	good := manual("more frequent")
	for _, tc := range []struct {
		name string
		edit func(a *settings.Analysis)
		want string // in the error
	}{
		{"unknown criterion", func(a *settings.Analysis) { a.Criteria = "more cheap" }, "1:6"},
		{"syntax", func(a *settings.Analysis) { a.Criteria = "(more frequent" }, "analysis.criteria: 1:"},
		{"empty while enabled", func(a *settings.Analysis) { a.Criteria, a.Enabled = " ", true }, "analysis.criteria"},
		{"unknown metric", func(a *settings.Analysis) { a.Metrics = map[string]string{"frequent": "speed"} }, "speed"},
		{"unbound criterion", func(a *settings.Analysis) { a.Criteria = "more usage-pattern" }, "usage-pattern"},
		{"interval", func(a *settings.Analysis) { a.Interval = 0 }, "analysis.interval"},
		{"budget", func(a *settings.Analysis) { a.Budget = 1.5 }, "analysis.budget"},
	} {
		a := good
		tc.edit(&a)
		err := SetAnalysis(a)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: SetAnalysis error %v; want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if got := Analysis(); !reflect.DeepEqual(got, before) {
		t.Errorf("rejected settings changed Analysis():\n got %+v\nwant %+v", got, before)
	}
	if len(History()) != hist || modeOf(t, &ps[0]) != mode {
		t.Error("rejected settings ran a cycle or changed a mode")
	}
	// Metrics merge over the defaults: a partial binding keeps the others.
	a := good
	a.Metrics = map[string]string{"expensive": "inter-arrival"}
	if err := SetAnalysis(a); err != nil {
		t.Fatal(err)
	}
	if m := Analysis().Metrics; m["expensive"] != "inter-arrival" || m["frequent"] != "count" {
		t.Errorf("metrics after a partial binding: %v", m)
	}
}

// TestAnalyzerLoop runs the real loop with a short interval, then disables it:
// the analyzer's choices are dropped and no goroutine is left behind.
func TestAnalyzerLoop(t *testing.T) {
	const pkg = "test.example/loop"
	ps := newProbes(t, pkg, 5)
	goroutines := runtime.NumGoroutine()
	a := manual("most frequent")
	// The shortest interval settings allow (settings.MinInterval).
	a.Enabled, a.Interval, a.Window = true, settings.MinInterval, settings.MinInterval*7/4
	useAnalysis(t, a)
	seq := 0
	if h := History(); len(h) > 0 {
		seq = h[len(h)-1].Seq
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a steady workload in which Fa is the most frequent
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i, n := range []int{20, 10, 5, 2, 1} {
				callN(&ps[i], n)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var timed []Cycle
	for deadline := time.Now().Add(20 * time.Second); len(timed) < 3 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		timed = timed[:0]
		for _, c := range History() {
			if c.Seq > seq && c.Trigger == "interval" {
				timed = append(timed, c)
			}
		}
	}
	close(stop)
	<-done
	if len(timed) < 3 {
		t.Fatalf("the loop ran %d cycles within 20s; want 3", len(timed))
	}
	fa := sig(pkg, "Fa")
	if last := timed[len(timed)-1]; !slices.Contains(last.Selected, fa) {
		t.Errorf("loop cycle %d selected %q; want it to include %s", last.Seq, last.Selected, fa)
	}
	// Toggling leaves no goroutine or timer behind.
	for i := 0; i < 20; i++ {
		b := a
		b.Enabled = i%2 == 1
		if err := SetAnalysis(b); err != nil {
			t.Fatal(err)
		}
	}
	b := a
	b.Enabled = false
	if err := SetAnalysis(b); err != nil {
		t.Fatal(err)
	}
	if modeOf(t, &ps[0]) != settings.Coarse {
		t.Errorf("analysis disabled: Fa mode %s, want coarse (the analyzer's choices dropped)", modeOf(t, &ps[0]))
	}
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(5 * time.Second); n > goroutines && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if n > goroutines {
		t.Errorf("%d goroutines after disabling the loop, %d before enabling it", n, goroutines)
	}
	seqNow := History()[len(History())-1].Seq
	time.Sleep(60 * time.Millisecond) // three intervals: a leaked timer would run a cycle
	if h := History(); h[len(h)-1].Seq != seqNow {
		t.Errorf("a cycle ran after analysis was disabled: %+v", h[len(h)-1])
	}
}

func TestMetricNames(t *testing.T) {
	s := monitor.Stats{Count: 4, MeanNs: 10, Errors: 1, Panics: 2, Concurrency: 0.5, InterArrivalNs: 100,
		ResultSizeSD: 3, Sized: 4, Cyclomatic: 5, Statements: 6, Params: 7}
	want := map[string]float64{"count": 4, "inter-arrival": 100, "mean-time": 10, "errors": 1, "error-rate": 0.25,
		"panics": 2, "concurrency": 0.5, "result-size-sd": 3, "cyclomatic": 5, "statements": 6, "params": 7}
	for name := range dsl.Metrics {
		v, ok := Metric(&s, name)
		if !ok || v != want[name] {
			t.Errorf("Metric(%q) = %v, %v; want %v, true", name, v, ok, want[name])
		}
	}
	if _, ok := Metric(&s, "speed"); ok {
		t.Error("Metric(speed) is known")
	}
	// Unknown is NaN, not zero: such a function must not look "most changeable".
	idle := monitor.Stats{Statements: 3}
	for _, name := range []string{"mean-time", "inter-arrival", "error-rate", "concurrency", "result-size-sd", "cyclomatic"} {
		if v, _ := Metric(&idle, name); !math.IsNaN(v) {
			t.Errorf("Metric(%q) of a function without data = %v, want NaN", name, v)
		}
	}
}

func TestEvaluateTable7(t *testing.T) {
	// The paper's Table 7 as a snapshot: the offline path selects findVets.
	rows := []struct {
		name        string
		count, time float64
		sd          float64
	}{
		{"findOwner", 12, 180, 6}, {"updateOwner", 2, 500, 0}, {"newVisit", 50, 250, 12},
		{"findVets", 200, 300, 200}, {"findAll", 100, 200, 90},
	}
	var stats []monitor.Stats
	for i, r := range rows {
		stats = append(stats, monitor.Stats{ID: uint32(i + 1), Signature: r.name, Count: uint64(r.count), MeanNs: r.time, ResultSizeSD: r.sd, Sized: 1})
	}
	stats = append(stats, monitor.Stats{ID: 9, Signature: "neverCalled"})
	ev, err := Evaluate(stats, settings.Default().Analysis)
	if err != nil {
		t.Fatal(err)
	}
	sel := ev.Selected()
	if len(sel) != 1 || sel[0].Signature != "findVets" || len(ev.Candidates) != 5 {
		t.Fatalf("selected %v of %d candidates; want findVets of 5", sel, len(ev.Candidates))
	}
	want := []string{"frequent: most (count 200)", "expensive: more (mean-time 300ns)", "changeable: least (result-size-sd 200)"}
	if got := ev.Reasons(4); !slices.Equal(got, want) {
		t.Errorf("reasons %q; want %q", got, want)
	}
	if _, err := Evaluate(stats, settings.Analysis{Criteria: "more frequent ∪"}); err == nil || !strings.Contains(err.Error(), "1:") {
		t.Errorf("bad criteria: error %v; want one with a column", err)
	}
}

// BenchmarkCycle measures one analysis cycle over 1000 probes that all ran, with
// the default three-criteria filter.
func BenchmarkCycle(b *testing.B) {
	const n = 1000
	ps := make([]monitor.Probe, n)
	infos := make([]monitor.ProbeInfo, n)
	for i := range infos {
		infos[i] = monitor.ProbeInfo{Package: "test.example/bench1000", Name: fmt.Sprintf("F%d", i), Results: []string{"int"}, Cyclomatic: 1 + i%7}
	}
	monitor.Register(testSettings, ps, infos)
	a := settings.Default().Analysis
	a.Window = settings.Duration(time.Hour)
	useAnalysis(b, a)
	for i := range ps {
		for j := 0; j < 1+i%13; j++ {
			if c := monitor.Enter(&ps[i]); c.On() {
				c.ExitSize(nil, int64(j*i%17))
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := AnalyzeNow(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAnalyzerSaysWhyNothing: on a small program the default filter may select
// nothing; the cycle then says why and what to relax, as it does for a quiet
// window.
func TestAnalyzerSaysWhyNothing(t *testing.T) {
	ps := newProbes(t, "test.example/why", 4)
	useAnalysis(t, manual(settings.Default().Analysis.Criteria))
	analyze(t)
	quiet := analyze(t)
	if !strings.Contains(quiet.Why, "no monitored function completed a call in the window") {
		t.Errorf("quiet cycle: why %q", quiet.Why)
	}
	// Calls with different counts and times, none reporting a result size: the
	// changeable criterion knows no function.
	for i, n := range []int{120, 40, 7, 3} {
		callN(&ps[i], n)
	}
	c := analyze(t)
	if len(c.Selected) != 0 {
		t.Fatalf("selected %q; the case wants none", c.Selected)
	}
	for _, want := range []string{`nothing qualified among 4 functions: "least changeable" selects none (result-size-sd is unknown for all of them`, `without "∩ least changeable" the filter would select`} {
		if !strings.Contains(c.Why, want) {
			t.Errorf("why %q lacks %q", c.Why, want)
		}
	}
	if h := History(); h[len(h)-1].Why != c.Why {
		t.Errorf("history lost the why: %q", h[len(h)-1].Why)
	}
}
