package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// evalPlanFlags parses args as the bench command's flags and returns the
// petclinic plan they ask for.
func evalPlanFlags(t *testing.T, args ...string) (evalPlan, error) {
	t.Helper()
	var o benchOptions
	cmd := &cobra.Command{Use: "bench"}
	o.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		return evalPlan{}, err
	}
	o.changed = cmd.Flags().Changed
	return o.evalPlanFor()
}

func TestEvalPlanFlags(t *testing.T) {
	all := "none,phase1,full,restricted-100,restricted-50,restricted-25,restricted-10,restricted-5,restricted-1," +
		"expanded-100,expanded-50,expanded-25,expanded-10,expanded-5,expanded-1"
	for _, c := range []struct {
		args []string
		want string // name runs warm-up duration interval: configurations
	}{
		{nil, "quick 1 4s 4s 1s: " + all},
		{[]string{"--full"}, "full 5 5s 9s 2s: " + all},
		{[]string{"--tiny"}, "tiny 1 2s 1.5s 500ms: none,phase1,full,restricted-100,restricted-1,expanded-100,expanded-1"},
		{[]string{"--tiny", "--sampling", "20,0.5"}, "tiny 1 2s 1.5s 500ms: none,phase1,full,restricted-20,restricted-0.5,expanded-20,expanded-0.5"},
		{[]string{"--full", "--runs", "5", "--duration", "20s", "--warmup-time", "9s", "--interval", "4s", "--only", "none,full,none"},
			"full 5 9s 20s 4s: none,full"},
		{[]string{"--only", "phase1", "--warmup-time", "1s", "--interval", "1m"}, "quick 1 1s 4s 1m0s: phase1"},
	} {
		p, err := evalPlanFlags(t, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var names []string
		for _, cf := range p.Configs {
			names = append(names, cf.Name)
		}
		got := fmt.Sprintf("%s %d %s %s %s: %s", p.Name, p.Runs, p.Warmup, p.Duration, p.Interval, strings.Join(names, ","))
		if got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.args, got, c.want)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--quick", "--tiny"}, "exclude each other"},
		{[]string{"--sampling", "0"}, "--sampling 0: want percentages in (0, 100]"},
		{[]string{"--sampling", "150"}, "--sampling 150"},
		{[]string{"--sampling", "10,10"}, "duplicated"},
		{[]string{"--restricted", "more cheap"}, `--restricted "more cheap": `},
		{[]string{"--expanded", "more usage-pattern"}, `--expanded "more usage-pattern": `},
		{[]string{"--only", "phase2"}, `--only: no configuration "phase2" (have none, phase1, full, restricted-100`},
		{[]string{"--warmup-time", "2s", "--interval", "2s"}, "must be longer than the analysis interval"},
		{[]string{"--duration", "-1s"}, "must not be negative"},
	} {
		if _, err := evalPlanFlags(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestEvalConfigEnvironment(t *testing.T) {
	p, err := evalPlanFlags(t, "--sampling", "25", "--interval", "2s", "--warmup-time", "3s")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string][]string{}
	for _, c := range p.Configs {
		env[c.Name] = c.Env
	}
	if len(env["none"]) != 0 {
		t.Errorf("none sets %q", env["none"])
	}
	for name, want := range map[string][]string{
		"phase1":         {"TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=off", "TIGRIS_RULES=none"},
		"full":           {"TIGRIS_MODE=fine", "TIGRIS_SAMPLING=100%", "TIGRIS_WRITER=async", "TIGRIS_ANALYSIS=off"},
		"restricted-25":  {"TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on", "TIGRIS_SAMPLING=25%", "TIGRIS_INTERVAL=2s", "TIGRIS_CRITERIA=" + defaultRestricted, "TIGRIS_BUDGET=off"},
		"expanded-25":    {"TIGRIS_CRITERIA=" + defaultExpanded, "TIGRIS_WINDOW=0s"},
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

func TestEvalWorkloadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--workload", "petclinic", "--calls", "10"}, "--workload petclinic does not take --calls"},
		{[]string{"bench", "--workload", "petclinic", "--from", "x", "--runs", "2"}, "--from summarizes earlier results; it does not take --runs"},
		{[]string{"bench", "--workload", "petclinic", "--from", "x", "--sampling", "2"}, "it does not take --sampling"},
		{[]string{"bench", "--workload", "petclinic", "--from", t.TempDir()}, "summary.json: no such file"},
		{[]string{"bench", "--duration", "5s", "--tiny"}, "--duration only apply to --workload petclinic"},
		{[]string{"bench", "--workload", "shop"}, `--workload "shop": want moobench or petclinic`},
		{[]string{"bench", "--workload", "petclinic", "--sampling", "0"}, "--sampling 0"},
	} {
		if _, _, err := tigris(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// testEvalSummary is a finished two-run evaluation with made-up numbers.
func testEvalSummary(t *testing.T) *evalSummary {
	t.Helper()
	p, err := evalPlanFlags(t, "--sampling", "100,10", "--runs", "2")
	if err != nil {
		t.Fatal(err)
	}
	sum := &evalSummary{Workload: workloadPetclinic, Plan: p, Complete: true}
	sum.Env.NumCPU = 2
	tp := map[string][2]float64{
		"none": {1000, 1020}, "phase1": {990, 1000}, "full": {700, 720},
		"restricted-100": {900, 920}, "restricted-10": {980, 990},
		"expanded-100": {800, 820}, "expanded-10": {950, 970},
	}
	for run := 1; run <= 2; run++ {
		for _, c := range p.Configs {
			r := evalRun{Config: c.Name, Run: run, Throughput: tp[c.Name][run-1], Requests: 10_000, Seconds: 10,
				WarmupRequests: 10_000, ServerCPUSeconds: 4, Errors: 100}
			if !c.plain() {
				r.MonitoredCalls = 50_000
			}
			if c.Kind == kindFull {
				r.Records, r.Dropped = 50_000, 500
			}
			if c.twoPhase() {
				r.Records = 1000
				r.CyclesBefore = 2
				r.Cycles = []evalCycle{{Candidates: 20, Selected: 2}, {Candidates: 20, Selected: 4}}
				r.Selected = []string{"service.(*ClinicService).FindVets", "repository.(*VetRepository).FindAll"}[:run]
			}
			sum.Runs = append(sum.Runs, r)
		}
	}
	summarizeEval(sum)
	return sum
}

func TestSummarizeEval(t *testing.T) {
	sum := testEvalSummary(t)
	if len(sum.Configs) != 7 {
		t.Fatalf("%d configurations summarized, want 7", len(sum.Configs))
	}
	byName := map[string]evalConfigSummary{}
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
	if err := writeEvalTable(&b, sum); err != nil {
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
	if err := writeEvalReport(dir, sum); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back evalSummary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Configs) != 7 || len(back.Runs) != 14 || back.Plan.Interval != sum.Plan.Interval || back.Configs[2].Ratio != sum.Configs[2].Ratio {
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

// TestBenchPetclinicTiny builds the tigris command and runs `tigris bench
// --workload petclinic --tiny` with it: the example builds plainly and with
// tigris (the first tigris build recompiles the standard library, a minute or
// more), every configuration serves load, and the report is written. Only
// what the runs did is checked, never a throughput.
func TestBenchPetclinicTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and loads the PetClinic example")
	}
	goExe, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tmp := t.TempDir()
	exe, env := buildTigris(ctx, t, goExe, tmp)
	dir := filepath.Join(tmp, "results")
	cmd := exec.CommandContext(ctx, exe, "bench", "--workload", "petclinic", "--tiny", "--out", dir)
	cmd.Env = append(env, "TIGRIS_MODE=fine") // must reach no service: each configuration sets its own
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tigris bench: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	configs := []string{"none", "phase1", "full", "restricted-100", "restricted-1", "expanded-100", "expanded-1"}
	for _, c := range configs {
		if !regexp.MustCompile(`(?m)^\s+` + c + `\s`).MatchString(stdout.String()) {
			t.Errorf("the table lacks %s:\n%s", c, stdout.String())
		}
	}
	if !regexp.MustCompile(`(?m)^\[7/7 \d+:\d\d, ETA 0:00\] run 1/1 `).MatchString(stderr.String()) ||
		!strings.Contains(stderr.String(), "built tigris petclinic") {
		t.Errorf("progress:\n%s", stderr.String())
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum evalSummary
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || len(sum.Runs) != len(configs) || len(sum.Configs) != len(configs) || sum.Probes == 0 {
		t.Fatalf("summary: complete %v, %d runs, %d configurations, %d probes", sum.Complete, len(sum.Runs), len(sum.Configs), sum.Probes)
	}
	for _, r := range sum.Runs {
		c := sum.Plan.Configs[slices.IndexFunc(sum.Plan.Configs, func(c evalConfig) bool { return c.Name == r.Config })]
		if r.Requests == 0 || r.Throughput <= 0 || r.NoAnswer != 0 || r.ServerCPUSeconds <= 0 {
			t.Errorf("%s: %d requests, %v req/s, %d without answer, %v s CPU", r.Config, r.Requests, r.Throughput, r.NoAnswer, r.ServerCPUSeconds)
		}
		switch {
		case c.plain():
			if r.MonitoredCalls != 0 || r.Records != 0 {
				t.Errorf("none: %d monitored calls, %d records", r.MonitoredCalls, r.Records)
			}
		case c.Kind == kindPhase1:
			if r.MonitoredCalls == 0 || r.Records != 0 || r.TraceBytes != 0 {
				t.Errorf("phase1: %d monitored calls, %d records, %d trace bytes", r.MonitoredCalls, r.Records, r.TraceBytes)
			}
		case c.Kind == kindFull:
			// Every monitored call makes a record (sampling 100 %); the
			// window's edges may cut a few calls.
			if r.Records == 0 || r.Records < r.MonitoredCalls*9/10 || r.TraceBytes == 0 {
				t.Errorf("full: %d records for %d monitored calls, %d trace bytes", r.Records, r.MonitoredCalls, r.TraceBytes)
			}
		case c.twoPhase():
			if r.CyclesBefore == 0 || len(r.Cycles) == 0 || r.Cycles[0].Candidates == 0 {
				t.Errorf("%s: %d cycles before the window, in it %+v", r.Config, r.CyclesBefore, r.Cycles)
			}
			if r.Records > r.MonitoredCalls {
				t.Errorf("%s: %d records for %d monitored calls", r.Config, r.Records, r.MonitoredCalls)
			}
		}
	}
	for _, f := range []string{"table.txt", "throughput.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch")); err == nil {
		t.Error("scratch directories kept without --keep-scratch")
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
