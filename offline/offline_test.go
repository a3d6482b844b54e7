package offline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/workdir"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// table7 is the paper's Table 7 as the admin endpoint would serve it.
func table7() []monitor.Stats {
	rows := []struct {
		name        string
		count       uint64
		time, sizes float64
	}{
		{"ClinicService.findOwner(args)", 12, 180, 6},
		{"ClinicService.updateOwner(args)", 2, 500, 0},
		{"VisitController.newVisit(args)", 50, 250, 12},
		{"ClinicService.findVets()", 200, 300, 200},
		{"OwnerRepository.findAll()", 100, 200, 90},
	}
	var out []monitor.Stats
	for i, r := range rows {
		out = append(out, monitor.Stats{ID: uint32(i + 1), Signature: r.name, Mode: "coarse", Count: r.count,
			MeanNs: r.time, ResultSizeSD: r.sizes, Sized: r.count})
	}
	return append(out, monitor.Stats{ID: 6, Signature: "Unused.neverCalled()", Mode: "coarse"})
}

// analyze runs the analysis of path with the default settings, criteria
// (when not "") as the filter and metrics over the default bindings.
func analyze(t *testing.T, path, criteria string, metrics map[string]string) (string, error) {
	t.Helper()
	workdir.Chdir(t, t.TempDir()) // no tigris.yaml upward
	o := Options{Metrics: metrics}
	if criteria != "" {
		o.Criteria = &criteria
	}
	a, err := Settings(o)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = Run(&out, path, a)
	return out.String(), err
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stats.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunSnapshot(t *testing.T) {
	path := writeJSON(t, table7())
	out, err := analyze(t, path, "", nil)
	if err != nil {
		t.Fatalf("analyze: %v\n%s", err, out)
	}
	for _, want := range []string{
		"criteria: (more frequent ∪ most expensive) ∩ least changeable",
		"6 functions, 5 called",
		"frequent: metric count (higher is more), quantiles",
		"cuts (count): 7 | 12 | 100 | 150",
		"changeable: metric result-size-sd (higher is less), quantiles",
		"selected: 1 of 5\n  ClinicService.findVets()\n" +
			"      frequent: most (count 200)\n      expensive: more (mean-time 300ns)\n      changeable: least (result-size-sd 200)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each function's partition, most first.
	for _, re := range []string{
		`(?m)^  most +200  ClinicService\.findVets\(\)\n  more +100  OwnerRepository\.findAll\(\)\n  plain +50  VisitController`,
		`(?m)^  least +200  ClinicService\.findVets\(\)$`, // changeable: the highest spread is least changeable
		`(?m)^  most +0  ClinicService\.updateOwner\(args\)$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "neverCalled") {
		t.Errorf("a function that never ran was grouped:\n%s", out)
	}
	// A filter that selects nothing says why.
	out, err = analyze(t, path, "most frequent ∩ most expensive", nil)
	if err != nil || !strings.Contains(out, "selected: 0 of 5\n  nothing qualified among 5 functions: \"most frequent\" (1) and \"most expensive\" (1) have no function in common") {
		t.Errorf("an empty selection: %v\n%s", err, out)
	}
}

func TestRunOptions(t *testing.T) {
	// The object form, and a filter and a binding over the defaults.
	path := writeJSON(t, map[string]any{"stats": table7()})
	out, err := analyze(t, path, "most expensive", nil)
	if err != nil || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.updateOwner(args)\n") {
		t.Errorf("most expensive: err %v\n%s", err, out)
	}
	// Bound to inter-arrival, "most frequent" is the shortest gap: findVets.
	stats := table7()
	for i := range stats {
		if stats[i].Count > 0 {
			stats[i].InterArrivalNs = 1e9 / float64(stats[i].Count)
		}
	}
	path = writeJSON(t, stats)
	out, err = analyze(t, path, "most frequent", map[string]string{"frequent": "inter-arrival"})
	if err != nil || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.findVets()\n      frequent: most (inter-arrival 5ms)") {
		t.Errorf("frequent=inter-arrival: err %v\n%s", err, out)
	}
	// Values and cuts read with their unit, rounded, aligned by characters.
	for _, want := range []string{"  cuts (inter-arrival): 7.5ms | 10ms | 83.3ms | 292ms\n", "\n  most        5ms  ClinicService.findVets()\n  more       10ms  ", "\n  less     83.3ms  "} {
		if !strings.Contains(out, want) {
			t.Errorf("frequent=inter-arrival: output lacks %q:\n%s", want, out)
		}
	}

	for _, tc := range []struct {
		path, criteria string
		metrics        map[string]string
		want           string
	}{
		{path, "more cheap", nil, "1:6"},
		{path, "", map[string]string{"frequent": "speed"}, "speed"},
		{filepath.Join(t.TempDir(), "missing.json"), "", nil, "missing.json"},
		{writeJSON(t, map[string]any{"probes": 1}), "", nil, `no "stats" array`},
	} {
		out, err := analyze(t, tc.path, tc.criteria, tc.metrics)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q %v: err %v, want one mentioning %q\n%s", tc.path, tc.criteria, tc.metrics, err, tc.want, out)
		}
	}
}

func TestSettingsConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tigris.yaml")
	yaml := "version: 1\nanalysis:\n  criteria: least frequent\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	workdir.Chdir(t, t.TempDir())
	a, err := Settings(Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Run(&b, writeJSON(t, table7()), a); err != nil {
		t.Fatalf("analyze with %s: %v\n%s", cfg, err, b.String())
	}
	out := b.String()
	if !strings.Contains(out, "criteria: least frequent") || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.updateOwner(args)\n") {
		t.Errorf("the filter of tigris.yaml was not used:\n%s", out)
	}

	// Found upward from the current directory, with a binding over the file's.
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o777); err != nil {
		t.Fatal(err)
	}
	workdir.Chdir(t, sub)
	a, err = Settings(Options{Metrics: map[string]string{"frequent": "errors"}})
	if err != nil || a.Criteria != "least frequent" || a.Metrics["frequent"] != "errors" || a.Metrics["expensive"] != "mean-time" {
		t.Errorf("tigris.yaml found upward: %v %+v", err, a)
	}
	if d := settings.Default().Analysis; d.Metrics["frequent"] != "count" {
		t.Errorf("Settings changed the defaults' bindings: %v", d.Metrics)
	}
}

func TestRunTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.tgr")
	w, err := writer.NewSync(writer.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"shop.Hot()", "shop.Warm()", "shop.Cool()", "shop.Cold()", "shop.Rare()"}
	counts := []int{200, 100, 50, 12, 2}
	var now int64 = 1000
	for i, name := range names {
		w.Define(writer.ProbeDef{ID: uint32(i + 1), Signature: name})
	}
	for i, n := range counts {
		for j := 0; j < n; j++ {
			r := writer.Record{Probe: uint32(i + 1), TIn: now, TOut: now + 100, Flags: writer.FlagSize, Size: int64(j % 3)}
			if j%10 == 0 {
				r.Flags |= writer.FlagError
			}
			w.Write(&r)
			now += 200
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := analyze(t, path, "most frequent ∪ most error-prone", nil)
	if err != nil {
		t.Fatalf("analyze trace: %v\n%s", err, out)
	}
	if !strings.Contains(out, "trace file, sampled calls only): 5 functions, 5 called") ||
		!strings.Contains(out, "selected: 1 of 5\n  shop.Hot()\n      frequent: most (count 200)\n      error-prone: most (errors 20)\n") {
		t.Errorf("trace analysis:\n%s", out)
	}
	// Static metrics are not in traces: say so rather than group nothing.
	if _, err := analyze(t, path, "least maintainable", nil); err == nil || !strings.Contains(err.Error(), "static metric") {
		t.Errorf("static metric on a trace: err %v", err)
	}
}

// TestExplainRounds: tigris analyze prints measured values and cuts with
// three significant digits and their unit, never a float's raw digits or an
// exponent, whatever the values.
func TestExplainRounds(t *testing.T) {
	stats := table7()
	for i := range stats {
		stats[i].Count *= 6861
		stats[i].MeanNs *= 904.4953
		stats[i].ResultSizeSD *= 1.2345678
		stats[i].Concurrency = 1.0 / 3 * float64(i+1)
		stats[i].Errors = stats[i].Count / 7
	}
	path := writeJSON(t, stats)
	for _, c := range []struct {
		criteria string
		metrics  map[string]string
	}{
		{"", nil},
		{"most frequent ∪ most concurrent ∪ most error-prone", map[string]string{"error-prone": "error-rate"}},
	} {
		out, err := analyze(t, path, c.criteria, c.metrics)
		if err != nil {
			t.Fatal(err)
		}
		if m := human.Unrounded.FindString(out); m != "" {
			t.Errorf("%q: unrounded number %q in:\n%s", c.criteria, m, out)
		}
		if c.criteria == "" && !strings.Contains(out, "expensive: more (mean-time 271µs)") {
			t.Errorf("the mean time of findVets (271.3485 µs) is not 271µs:\n%s", out)
		}
	}
}

// TestAggregateTraceWindows: a call counts in the windows its exit falls in,
// as the monitor counts it; overlapping windows share calls; every window
// lists every defined probe; calls before from and windows that would end
// after to are left out.
func TestAggregateTraceWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.tgr")
	base := time.Unix(5_000_000, 0)
	w, err := writer.NewSync(writer.Options{Path: path, Clock: writer.ClockBase{Wall: base.UnixNano()}})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "a"})
	w.Define(writer.ProbeDef{ID: 2, Signature: "b"})
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		id      uint32
		in, out int64 // ms from base
	}{
		{1, 0, 50},      // before from
		{1, 90, 120},    // entered before from, exits in window 0
		{1, 300, 400},   // windows 0 and 1
		{2, 550, 560},   // windows 1 and 2
		{1, 1050, 1090}, // window 2 only (a fourth would end after to)
	} {
		w.Write(&writer.Record{Probe: c.id, TIn: c.in * ms, TOut: c.out * ms})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	from := base.Add(100 * time.Millisecond)
	// Windows of 500 ms every 250 ms from 100 ms, ending by 1200 ms: three
	// ([100, 600), [350, 850), [600, 1100)).
	wins, err := AggregateTraceWindows(path, from, base.Add(1200*time.Millisecond), 500*time.Millisecond, 250*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]uint64{{2, 1}, {1, 1}, {1, 0}}
	if len(wins) != len(want) {
		t.Fatalf("%d windows, want %d", len(wins), len(want))
	}
	for i, win := range wins {
		if len(win) != 2 || win[0].Signature != "a" || win[1].Signature != "b" {
			t.Fatalf("window %d: %+v, want probes a and b", i, win)
		}
		if got := [2]uint64{win[0].Count, win[1].Count}; got != want[i] {
			t.Errorf("window %d counts %v, want %v", i, got, want[i])
		}
	}
	if a := wins[0][0]; a.MeanNs != float64(65*ms) || a.InterArrivalNs != float64(250*ms) {
		t.Errorf("window 0, a: mean %v, inter-arrival %v; want 65 ms (30 and 100) and 250 ms (2 calls in 500 ms)", a.MeanNs, a.InterArrivalNs)
	}
}

// TestAggregateTraceLeavesUnfinishedOut: a call still running when the
// program's writer closed counts in no statistic of tigris analyze, as in the
// monitor's coarse statistics: its duration is unknown.
func TestAggregateTraceLeavesUnfinishedOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.tgr")
	w, err := writer.NewSync(writer.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "shop.Serve()"})
	for _, r := range []writer.Record{
		{Probe: 1, TIn: 1000, TOut: 1100},
		{Probe: 1, TIn: 2000, TOut: 2300},
		{Probe: 1, TIn: 3000, TOut: 1_000_000, Flags: writer.FlagUnfinished},
	} {
		w.Write(&r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stats, err := AggregateTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 1 || stats[0].Count != 2 || stats[0].MeanNs != 200 {
		t.Errorf("stats %+v: want 2 calls of mean 200 ns, the unfinished one left out", stats)
	}
}
