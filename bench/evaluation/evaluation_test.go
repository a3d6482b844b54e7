package evaluation

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/bench"
	"github.com/tigrisgo/tigris/config"
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
	p, err := p.Only("none", "phase1", "full", "off", "query", "fine-one", "restricted-100", "restricted-10", "expanded-100", "expanded-10", "truth")
	if err != nil {
		t.Fatal(err)
	}
	sum := &Summary{Workload: Workload, Plan: p, Complete: true}
	sum.Env.NumCPU = 2
	tp := map[string][2]float64{
		"none": {1000, 1020}, "phase1": {990, 1000}, "full": {700, 720},
		"restricted-100": {900, 920}, "restricted-10": {980, 990},
		"expanded-100": {800, 820}, "expanded-10": {950, 970},
	}
	cpu := map[string][2]float64{"none": {400, 410}, "full": {500, 520}}
	const pkg = "github.com/tigrisgo/tigris/examples/petclinic/internal/"
	findVets, findAll := pkg+"service.(*ClinicService).FindVets(context.Context) ([]"+pkg+"model.Vet, error)", pkg+"repository.(*VetRepository).FindAll(context.Context) ([]"+pkg+"model.Vet, error)"
	for run := 1; run <= 2; run++ {
		for _, c := range p.Configs {
			if c.Once && run > 1 {
				continue
			}
			r := RunResult{Config: c.Name, Run: run, Throughput: tp[c.Name][run-1], Requests: 10_000, Seconds: 10,
				WarmupRequests: 10_000, ServerCPUSeconds: 4, Errors: 100, CPUPerRequestUs: cmp.Or(cpu[c.Name][run-1], 400+10*float64(run-1)),
				GCs: 20, Position: 60 * (run - 1)}
			if !c.Plain() {
				r.MonitoredCalls, r.TimedCalls = 50_000, 10_000
			}
			if c.Kind == KindFull {
				r.Records, r.Dropped, r.TimedCalls = 50_000, 500, 50_000
			}
			if c.Kind == KindTruth {
				// The second round's load made the expanded filter select less.
				r.Truth = map[string][]string{p.Restricted: {findVets}, p.Expanded: []string{findVets, findAll}[:3-run]}
			}
			if c.TwoPhase() {
				r.Records = 1000
				r.CyclesBefore = 2
				r.Cycles = []Cycle{{Candidates: 20, Selected: 2, Functions: []string{findVets, findAll}}, {Candidates: 20, Selected: 4, Functions: []string{findVets}}}
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
	if len(sum.Configs) != 11 {
		t.Fatalf("%d configurations summarized, want 11", len(sum.Configs))
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
	if !near(full.RecordsPerSec, 5000) || !near(full.DroppedShare, 0.01) || !near(full.CallsPerRequest, 5) || !near(full.CPUPerRequestUs, 510) {
		t.Errorf("full: %v records/s, %v dropped, %v calls/request, %v µs/request", full.RecordsPerSec, full.DroppedShare, full.CallsPerRequest, full.CPUPerRequestUs)
	}
	if !near(full.CPURatio, 510.0/405) || full.CPURatioLo > full.CPURatio || full.CPURatioHi < full.CPURatio || full.CPULo != 500 || full.CPUHi != 520 {
		t.Errorf("full: CPU %v [%v, %v], ratio %v [%v, %v]", full.CPUPerRequestUs, full.CPULo, full.CPUHi, full.CPURatio, full.CPURatioLo, full.CPURatioHi)
	}
	// Paired by round: 500/400 and 520/410, their geometric mean (the
	// median of two logs), the interval between the two.
	if !near(full.PairedRatio, math.Sqrt(500.0/400*520/410)) || full.PairedRounds != 2 || !near(full.PairedRatioLo, 1.25) || !near(full.PairedRatioHi, 520.0/410) {
		t.Errorf("full paired: %v [%v, %v] over %d rounds", full.PairedRatio, full.PairedRatioLo, full.PairedRatioHi, full.PairedRounds)
	}
	// 5 records a request, cold: 5 × 105.1 ns.
	if lo, hi := full.ModelLo, full.ModelHi; !near(hi, 5*(78.8+26.3)/1000) || lo >= hi || full.ModelOK {
		t.Errorf("full: model %v–%v µs, ok %v (measured about 105 µs more)", lo, hi, full.ModelOK)
	}
	if !near(r.Selected, 3) || !near(r.Candidates, 20) || r.SelectedFuncs["service.(*ClinicService).FindVets"] != 2 || len(r.SelectedFuncs) != 2 {
		t.Errorf("restricted-100: selected %v of %v, functions %v", r.Selected, r.Candidates, r.SelectedFuncs)
	}
	// Restricted truth {FindVets}: cycles {FindVets, FindAll} (precision
	// 0.5, recall 1) and {FindVets} (1, 1), Jaccard 0.5 between them.
	if q := r.Quality; q == nil || q.Cycles != 4 || !near(q.Precision, 0.75) || !near(q.Recall, 1) || !near(q.Stability, 0.5) {
		t.Errorf("restricted-100 quality: %+v", r.Quality)
	}
	// Each run against its own round's truth: in round 1 {FindVets, FindAll}
	// (cycles 1, 1 and 1, 0.5), in round 2 {FindVets} (0.5, 1 and 1, 1).
	if q := byName["expanded-10"].Quality; q == nil || !near(q.Precision, 0.875) || !near(q.Recall, 0.875) {
		t.Errorf("expanded-10 quality: %+v", q)
	}
	// Run 1 came early in its round, run 2 late: mostly 400 and 410 µs
	// over their median 405.
	if !near(sum.EarlyCPU, 400.0/405) || !near(sum.LateCPU, 410.0/405) {
		t.Errorf("order: early %v, late %v", sum.EarlyCPU, sum.LateCPU)
	}
	if !near(none.ErrorShare, 0.01) || none.CallsPerRequest != 0 || full.Quality != nil || !near(none.GCsPerKRequest, 2) {
		t.Errorf("none: error share %v, calls/request %v; full quality %v", none.ErrorShare, none.CallsPerRequest, full.Quality)
	}

	var b bytes.Buffer
	if err := WriteTable(&b, sum); err != nil {
		t.Fatal(err)
	}
	table := b.String()
	for _, want := range []string{
		`(?m)^\s+none\s+-\s+-\s+2\s+405\s+\[400, 410\]\s+\+0\.0%\s+\[[^]]*\]\s+\+0\.0%\s+\[\+0\.0%, \+0\.0%\]\s+-\s+1010\s+\[1000, 1020\]\s+-\s+-\s+2\.0\s+-\s+-\s+-\s*$`,
		`(?m)^\s+full\s+module\s+100%\s+2\s+510\s+\[500, 520\]\s+\+25\.9%\s+\[[^]]*\]\s+\+25\.9%\s+\[\+25\.0%, \+26\.8%\]\s+\+0\.\d–0\.\d% ≠\s+710\s+\[700, 720\]\s+5\.0\s+5000\s+2\.0\s+-\s+-\s+-\s*$`,
		`(?m)^\s+restricted-100\s+module\s+100%\s.*\s0\.75\s+1\.00\s+0\.50\s*$`,
		`restricted: \(more frequent ∪ most expensive\) ∩ least changeable`,
		`ground truth, steady load, restricted filter: service\.\(\*ClinicService\)\.FindVets\n`,
		`ground truth, steady load, expanded filter, round 1: service\.\(\*ClinicService\)\.FindVets, repository\.\(\*VetRepository\)\.FindAll\n`,
		`ground truth, steady load, expanded filter, round 2: service\.\(\*ClinicService\)\.FindVets\n`,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("the table lacks %s:\n%s", want, table)
		}
	}
	if strings.Contains(table, "\n    truth ") {
		t.Errorf("the table has a row for the ground truth's run:\n%s", table)
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
	if len(back.Configs) != 11 || len(back.Runs) != 22 || back.Plan.Interval != sum.Plan.Interval || back.Configs[2].Ratio != sum.Configs[2].Ratio {
		t.Errorf("summary.json does not round-trip: %d configurations, %d runs, interval %s", len(back.Configs), len(back.Runs), back.Plan.Interval)
	}
	for name, wants := range map[string][]string{
		"throughput.svg": {"no monitoring", "phase 1 only", "full monitoring", "restricted filter: ", "expanded filter: ", "100%", "10%"},
		"cpu.svg":        {"CPU per request", "no monitoring", "probes off", "restricted filter: ", "% of no monitoring"},
	} {
		svg, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(svg, new(struct{})); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, want := range wants {
			if !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}

func TestQualityMeasures(t *testing.T) {
	a, b, c := "a", "b", "c"
	for _, tc := range []struct {
		sel, truth []string
		p, r, j    float64
	}{
		{[]string{a, b}, []string{a}, 0.5, 1, 0.5},
		{[]string{a}, []string{a, b}, 1, 0.5, 0.5},
		{nil, []string{a}, 1, 0, 0},
		{[]string{a}, nil, 0, 1, 0},
		{nil, nil, 1, 1, 1},
		{[]string{a, c}, []string{b}, 0, 0, 0},
	} {
		p, r := precisionRecall(tc.sel, tc.truth)
		if p != tc.p || r != tc.r || jaccard(tc.sel, tc.truth) != tc.j {
			t.Errorf("%v against %v: precision %v, recall %v, Jaccard %v; want %v, %v, %v", tc.sel, tc.truth, p, r, jaccard(tc.sel, tc.truth), tc.p, tc.r, tc.j)
		}
	}
	// The truth switches from {a} to {b, c}.
	at := time.Unix(100, 0)
	cy := func(sec int64, fs ...string) Cycle { return Cycle{At: time.Unix(sec, 0), Functions: fs} }
	for _, tc := range []struct {
		cycles []Cycle
		want   int
	}{
		{[]Cycle{cy(99, a), cy(101, a), cy(102, b), cy(103, b)}, 2},
		{[]Cycle{cy(99, a), cy(101, b, c), cy(102, b)}, 1},
		{[]Cycle{cy(99, a), cy(101, a, c), cy(102, a)}, 0}, // nearer {a} still
		{[]Cycle{cy(99, a, b), cy(101, b), cy(102, c)}, 1}, // b: F1 0.67 against 0
		{[]Cycle{cy(99, a)}, 0},
	} {
		if got := follow(tc.cycles, at, []string{a}, []string{b, c}); got != tc.want {
			t.Errorf("follow(%v) = %d, want %d", tc.cycles, got, tc.want)
		}
	}
}

func TestRoundOrder(t *testing.T) {
	cs := []Config{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "t", Once: true}}
	names := func(cs []Config) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Name)
		}
		return strings.Join(s, "")
	}
	for rep, want := range map[int]string{1: "abct", 2: "acb", 3: "cab", 4: "cba"} {
		if got := names(roundOrder(cs, rep)); got != want {
			t.Errorf("round %d: %s, want %s", rep, got, want)
		}
	}
}

func TestScopeConfigs(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range Scopes() {
		path, err := sc.writeConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name == ScopeNarrow {
			if path != "" {
				t.Errorf("narrow writes %s, want the example's own", path)
			}
			continue
		}
		cfg, err := config.Load(path)
		if err != nil {
			t.Errorf("%s: %v\n%s", sc.Name, err, sc.yaml())
			continue
		}
		if cfg.Std != sc.Std || len(cfg.Include) != len(sc.Include) {
			t.Errorf("%s: std %v, %d includes; want %v, %d", sc.Name, cfg.Std, len(cfg.Include), sc.Std, len(sc.Include))
		}
	}
}

func TestCostModel(t *testing.T) {
	m := DefaultCosts()
	// 10 calls, 4 timed, 1 of them traced; 20 calls off.
	lo, hi := m.Predict(10, 4, 1, 20)
	wantLo := (20*0.5 + 6*2.5 + 3*28.3 + 1*(37.3+26.3)) / 1000
	if d := lo - wantLo; d > 1e-12 || d < -1e-12 || hi <= lo {
		t.Errorf("Predict: %v–%v µs, want %v at the hot end and more at the cold", lo, hi, wantLo)
	}
	if lo, hi := m.Predict(0, 0, 0, 0); lo != 0 || hi != 0 {
		t.Errorf("nothing monitored: %v–%v", lo, hi)
	}
}

func TestStartOnPins(t *testing.T) {
	cpus := allowedCPUs()
	if len(cpus) < 2 {
		t.Skip("fewer than two CPUs to pin to")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	cpu := cpus[len(cpus)-1]
	cmd := exec.Command(sleep, "10")
	if err := startOn(cmd, cpu); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if got := cpusAllowed(cmd.Process.Pid); got != strconv.Itoa(cpu) {
		t.Errorf("the child may run on %q, want %d", got, cpu)
	}
	if got := allowedCPUs(); !slices.Equal(got, cpus) {
		t.Errorf("after the start this process may run on %v, before on %v", got, cpus)
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
	if threadsCPU(os.Getpid()) <= 0 {
		t.Error("threadsCPU of this process: 0")
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
	if got := strings.Join(names, ","); got != "none,phase1,full,off,query,fine-one,restricted-100,restricted-1,expanded-100,expanded-1,"+
		"narrow-phase1,narrow-full,deps-phase1,deps-full,deps-expanded-10,truth,truth-browse,truth-maintenance,shift-restricted,shift-expanded" {
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
	if !sum.Complete || len(sum.Runs) != 1 || len(sum.Builds) != 2 || sum.Builds[1].Binary != "plain" {
		t.Fatalf("summary: complete %v, %d runs, builds %+v", sum.Complete, len(sum.Runs), sum.Builds)
	}
	if r := sum.Runs[0]; r.Requests == 0 || r.Throughput <= 0 || r.NoAnswer != 0 || r.MonitoredCalls != 0 {
		t.Errorf("run: %d requests, %v req/s, %d without answer, %d monitored calls", r.Requests, r.Throughput, r.NoAnswer, r.MonitoredCalls)
	}
	// Its second of load allocates megabytes: the collections are counted
	// from the service's gctrace lines.
	if r := sum.Runs[0]; r.CPUPerRequestUs <= 0 || r.GCs == 0 {
		t.Errorf("run: %v µs CPU per request, %d collections", r.CPUPerRequestUs, r.GCs)
	}
	if !regexp.MustCompile(`(?m)^\[1/1 0:\d\d, ETA 0:00\] run 1/1 none: \d+ µs CPU/request, `).MatchString(progress.String()) {
		t.Errorf("progress:\n%s", progress.String())
	}
}

// TestSummarizeEarlierRuns: a summary.json of an earlier version has no CPU
// of the window; its runs' CPU per request is their rusage over their whole
// life.
func TestSummarizeEarlierRuns(t *testing.T) {
	p := TinyPlan()
	p.Configs = Configs(p)
	p, err := p.Only("none")
	if err != nil {
		t.Fatal(err)
	}
	sum := &Summary{Workload: Workload, Plan: p}
	for run, cpu := range []float64{4, 5} {
		sum.Runs = append(sum.Runs, RunResult{Config: "none", Run: run + 1, Throughput: 1000, Requests: 7000, WarmupRequests: 3000, ServerCPUSeconds: cpu})
	}
	Summarize(sum)
	if cs := sum.Configs[0]; cs.CPUPerRequestUs != 450 || cs.CPULo != 400 || cs.CPUHi != 500 {
		t.Errorf("CPU per request %v [%v, %v], want 450 [400, 500] from the runs' rusage", cs.CPUPerRequestUs, cs.CPULo, cs.CPUHi)
	}
}
