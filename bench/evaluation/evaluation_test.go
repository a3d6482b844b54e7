package evaluation

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/bench"
)

func TestConfigEnvironment(t *testing.T) {
	p := QuickPlan()
	p.Sampling, p.Interval, p.Warmup = []float64{25}, dur(2*time.Second), dur(3*time.Second)
	env := map[string][]string{}
	for _, c := range Configs(p) {
		env[c.Name] = c.Env
	}
	if len(env["none"]) != 0 {
		t.Errorf("none sets %q", env["none"])
	}
	for name, want := range map[string][]string{
		"phase1":         {"TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=off", "TIGRIS_RULES=none"},
		"full":           {"TIGRIS_MODE=fine", "TIGRIS_SAMPLING=100%", "TIGRIS_WRITER=async", "TIGRIS_ANALYSIS=off"},
		"restricted-25":  {"TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on", "TIGRIS_SAMPLING=25%", "TIGRIS_INTERVAL=2s", "TIGRIS_CRITERIA=" + DefaultRestricted, "TIGRIS_BUDGET=off"},
		"expanded-25":    {"TIGRIS_CRITERIA=" + DefaultExpanded, "TIGRIS_WINDOW=0s"},
		"restricted-100": nil,
	} {
		got, ok := env[name]
		if !ok && want != nil {
			t.Errorf("no configuration %s", name)
		}
		for _, kv := range want {
			if !slices.Contains(got, kv) {
				t.Errorf("%s: %q lacks %s", name, got, kv)
			}
		}
	}
}

// testSummary is a finished two-run evaluation with made-up numbers.
func testSummary(t *testing.T) *Summary {
	t.Helper()
	p := QuickPlan()
	p.Sampling, p.Runs = []float64{100, 10}, 2
	p.Configs = Configs(p)
	sum := &Summary{Workload: Workload, Plan: p, Complete: true}
	sum.Env.NumCPU = 2
	tp := map[string][2]float64{
		"none": {1000, 1020}, "phase1": {990, 1000}, "full": {700, 720},
		"restricted-100": {900, 920}, "restricted-10": {980, 990},
		"expanded-100": {800, 820}, "expanded-10": {950, 970},
	}
	for run := 1; run <= 2; run++ {
		for _, c := range p.Configs {
			r := RunResult{Config: c.Name, Run: run, Throughput: tp[c.Name][run-1], Requests: 10_000, Seconds: 10,
				WarmupRequests: 10_000, ServerCPUSeconds: 4, Errors: 100}
			if !c.Plain() {
				r.MonitoredCalls = 50_000
			}
			if c.Kind == KindFull {
				r.Records, r.Dropped = 50_000, 500
			}
			if c.TwoPhase() {
				r.Records = 1000
				r.CyclesBefore = 2
				r.Cycles = []Cycle{{Candidates: 20, Selected: 2}, {Candidates: 20, Selected: 4}}
				r.Selected = []string{"service.(*ClinicService).FindVets", "repository.(*VetRepository).FindAll"}[:run]
			}
			sum.Runs = append(sum.Runs, r)
		}
	}
	Summarize(sum)
	return sum
}

func TestSummarize(t *testing.T) {
	sum := testSummary(t)
	if len(sum.Configs) != 10 {
		t.Fatalf("%d configurations summarized, want 10", len(sum.Configs))
	}
	byName := map[string]ConfigSummary{}
	for _, cs := range sum.Configs {
		byName[cs.Name] = cs
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	none, full, r := byName["none"], byName["full"], byName["restricted-100"]
	if none.Runs != 2 || !near(none.Throughput, 1010) || !near(none.Ratio, 1) || none.CI95 <= 0 {
		t.Errorf("none: %+v", none)
	}
	if !near(full.Ratio, 710.0/1010) || !near(full.Overhead, 1-710.0/1010) || full.RatioCI <= 0 {
		t.Errorf("full: ratio %v ± %v, overhead %v", full.Ratio, full.RatioCI, full.Overhead)
	}
	if !near(full.RecordsPerSec, 5000) || !near(full.DroppedShare, 0.01) || !near(full.CallsPerRequest, 5) || !near(full.CPUPerRequestUs, 200) {
		t.Errorf("full: %v records/s, %v dropped, %v calls/request, %v µs/request", full.RecordsPerSec, full.DroppedShare, full.CallsPerRequest, full.CPUPerRequestUs)
	}
	if !near(r.Selected, 3) || !near(r.Candidates, 20) || r.SelectedFuncs["service.(*ClinicService).FindVets"] != 2 || len(r.SelectedFuncs) != 2 {
		t.Errorf("restricted-100: selected %v of %v, functions %v", r.Selected, r.Candidates, r.SelectedFuncs)
	}
	if !near(none.ErrorShare, 0.01) || none.CallsPerRequest != 0 {
		t.Errorf("none: error share %v, calls/request %v", none.ErrorShare, none.CallsPerRequest)
	}

	var b bytes.Buffer
	if err := WriteTable(&b, sum); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{
		`(?m)^\s+none\s+-\s+2\s+1010\.0\s+\d+\.\d\s+100\.0%\s+\d+\.\d%\s+0\.0%\s+200\s+-\s+-\s+-\s+-\s*$`,
		`(?m)^\s+full\s+100%\s+2\s+710\.0\s+\d+\.\d\s+70\.3%\s+\d+\.\d%\s+29\.7%\s+200\s+5\.0\s+5000\s+1\.00%\s+-\s*$`,
		`(?m)^\s+expanded-10\s+10%\s+2\s+960\.0 .* 3\.0 of 20\s*$`,
		`restricted: \(more frequent ∪ most expensive\) ∩ least changeable`,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("the table lacks %s:\n%s", want, table)
		}
	}

	dir := t.TempDir()
	if err := Report(dir, sum); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Configs) != 10 || len(back.Runs) != 20 || back.Plan.Interval != sum.Plan.Interval || back.Configs[2].Ratio != sum.Configs[2].Ratio {
		t.Errorf("summary.json does not round-trip: %d configurations, %d runs, interval %s", len(back.Configs), len(back.Runs), back.Plan.Interval)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "throughput.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Errorf("throughput.svg: %v", err)
	}
	for _, want := range []string{"no monitoring", "phase 1 only", "full monitoring", "restricted filter: ", "expanded filter: ", "100%", "10%"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}

func TestCPUCounters(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat")
	}
	if machineCPU() <= 0 {
		t.Error("machineCPU: 0 with a /proc/stat")
	}
	// Burn CPU until the kernel has counted some (a tick is 10 ms).
	start := processCPU("self")
	for deadline := time.Now().Add(5 * time.Second); processCPU("self") == start && time.Now().Before(deadline); {
		for i := 0; i < 1e6; i++ {
			_ = strings.Repeat("x", i%3)
		}
	}
	if processCPU("self") <= start {
		t.Errorf("processCPU(self) did not grow from %s", start)
	}
	if got := processCPU("no-such-pid"); got != 0 {
		t.Errorf("processCPU of no process: %s", got)
	}
}

func TestPlanOnlyAndValidate(t *testing.T) {
	p := TinyPlan()
	p.Configs = Configs(p)
	var names []string
	for _, c := range p.Configs {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "none,phase1,full,off,query,fine-one,restricted-100,restricted-1,expanded-100,expanded-1" {
		t.Errorf("tiny configurations: %s", got)
	}
	q, err := p.Only("full", "none", "full")
	if err != nil || len(q.Configs) != 2 || q.Configs[0].Name != "full" || q.Configs[1].Name != "none" {
		t.Errorf("Only(full, none, full): %v %+v", err, q.Configs)
	}
	if _, err := p.Only("phase2"); err == nil || !strings.HasPrefix(err.Error(), `no configuration "phase2" (have none, phase1, full,`) {
		t.Errorf("Only(phase2): %v", err)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("tiny: %v", err)
	}
	p.Warmup = p.Interval
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "must be longer than the analysis interval") {
		t.Errorf("warm-up = interval: %v", err)
	}
	if q, _ := p.Only("none", "phase1"); q.Validate() != nil {
		t.Errorf("without two-phase configurations the warm-up may be short: %v", q.Validate())
	}
	if err := (Plan{Name: "x"}).Validate(); err == nil {
		t.Error("a plan without configurations validated")
	}
	if err := CheckFilter("more cheap"); err == nil {
		t.Error(`CheckFilter("more cheap"): no error`)
	}
}

func TestReadSummary(t *testing.T) {
	sum := testSummary(t)
	dir := t.TempDir()
	if err := Report(dir, sum); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Configs) != len(sum.Configs) || back.Configs[2].Ratio != sum.Configs[2].Ratio {
		t.Errorf("read back: %d configurations, ratio %v", len(back.Configs), back.Configs[2].Ratio)
	}
	if _, err := ReadSummary(t.TempDir()); err == nil || !strings.Contains(err.Error(), "summary.json") {
		t.Errorf("no summary.json: %v", err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "summary.json"), []byte(`{"workload":"moobench"}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(other); err == nil || !strings.Contains(err.Error(), `not a petclinic evaluation (workload "moobench")`) {
		t.Errorf("a MooBench summary: %v", err)
	}
}

// TestDriverPlain runs the plain configuration of a short plan for real: the
// example builds with the go command (no tigris executable is needed), serves
// load and is measured. Only what the run did is checked, never a throughput.
func TestDriverPlain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads the PetClinic example")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := bench.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p := TinyPlan()
	p.Warmup, p.Duration = dur(500*time.Millisecond), dur(time.Second)
	p.Configs = Configs(p)
	if p, err = p.Only("none"); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	d := &Driver{Root: root, Progress: &progress}
	sum, err := d.Run(context.Background(), p)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if !sum.Complete || len(sum.Runs) != 1 || len(sum.Builds) != 1 || sum.Builds[0].Binary != "plain" {
		t.Fatalf("summary: complete %v, %d runs, builds %+v", sum.Complete, len(sum.Runs), sum.Builds)
	}
	if r := sum.Runs[0]; r.Requests == 0 || r.Throughput <= 0 || r.NoAnswer != 0 || r.MonitoredCalls != 0 {
		t.Errorf("run: %d requests, %v req/s, %d without answer, %d monitored calls", r.Requests, r.Throughput, r.NoAnswer, r.MonitoredCalls)
	}
	if !regexp.MustCompile(`(?m)^\[1/1 0:\d\d, ETA 0:00\] run 1/1 none: `).MatchString(progress.String()) {
		t.Errorf("progress:\n%s", progress.String())
	}
}
