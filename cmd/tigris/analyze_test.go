package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor"
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

// runCLI runs the tigris command line in an empty directory (no tigris.yaml).
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("TIGRIS_CONFIG", "")
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
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

func TestAnalyzeSnapshot(t *testing.T) {
	path := writeJSON(t, table7())
	out, err := runCLI(t, "analyze", path)
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
			"      frequent: most (count 200)\n      expensive: more (mean-time 300)\n      changeable: least (result-size-sd 200)\n",
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
	out, err = runCLI(t, "analyze", "--criteria", "most frequent ∩ most expensive", path)
	if err != nil || !strings.Contains(out, "selected: 0 of 5\n  nothing qualified among 5 functions: \"most frequent\" (1) and \"most expensive\" (1) have no function in common") {
		t.Errorf("analyze with an empty selection: %v\n%s", err, out)
	}
}

func TestAnalyzeFlags(t *testing.T) {
	// The object form, and a --criteria and --metric over the defaults.
	path := writeJSON(t, map[string]any{"stats": table7()})
	out, err := runCLI(t, "analyze", "--criteria", "most expensive", path)
	if err != nil || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.updateOwner(args)\n") {
		t.Errorf("--criteria 'most expensive': err %v\n%s", err, out)
	}
	// Bound to inter-arrival, "most frequent" is the shortest gap: findVets.
	stats := table7()
	for i := range stats {
		if stats[i].Count > 0 {
			stats[i].InterArrivalNs = 1e9 / float64(stats[i].Count)
		}
	}
	path = writeJSON(t, stats)
	out, err = runCLI(t, "analyze", "--criteria", "most frequent", "--metric", "frequent=inter-arrival", path)
	if err != nil || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.findVets()\n      frequent: most (inter-arrival 5000000)") {
		t.Errorf("--metric frequent=inter-arrival: err %v\n%s", err, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--criteria", "more cheap", path}, "1:6"},
		{[]string{"--metric", "frequent", path}, "criterion=metric"},
		{[]string{"--metric", "frequent=speed", path}, "speed"},
		{[]string{filepath.Join(t.TempDir(), "missing.json")}, "missing.json"},
		{[]string{writeJSON(t, map[string]any{"probes": 1})}, `no "stats" array`},
	} {
		out, err := runCLI(t, append([]string{"analyze"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("analyze %q: err %v, want one mentioning %q\n%s", tc.args, err, tc.want, out)
		}
	}
}

func TestAnalyzeConfigCriteria(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tigris.yaml")
	yaml := "version: 1\nanalysis:\n  criteria: least frequent\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "analyze", "--config", cfg, writeJSON(t, table7()))
	if err != nil {
		t.Fatalf("analyze --config: %v\n%s", err, out)
	}
	if !strings.Contains(out, "criteria: least frequent") || !strings.Contains(out, "selected: 1 of 5\n  ClinicService.updateOwner(args)\n") {
		t.Errorf("the filter of tigris.yaml was not used:\n%s", out)
	}
}

func TestAnalyzeTrace(t *testing.T) {
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
	out, err := runCLI(t, "analyze", "--criteria", "most frequent ∪ most error-prone", path)
	if err != nil {
		t.Fatalf("analyze trace: %v\n%s", err, out)
	}
	if !strings.Contains(out, "trace file, sampled calls only): 5 functions, 5 called") ||
		!strings.Contains(out, "selected: 1 of 5\n  shop.Hot()\n      frequent: most (count 200)\n      error-prone: most (errors 20)\n") {
		t.Errorf("trace analysis:\n%s", out)
	}
	// Static metrics are not in traces: say so rather than group nothing.
	if _, err := runCLI(t, "analyze", "--criteria", "least maintainable", path); err == nil || !strings.Contains(err.Error(), "static metric") {
		t.Errorf("static metric on a trace: err %v", err)
	}
}
