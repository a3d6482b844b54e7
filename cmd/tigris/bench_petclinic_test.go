package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/bench/evaluation"
)

// evalPlanFlags returns the petclinic plan the bench flags args ask for.
func evalPlanFlags(t *testing.T, args ...string) (evaluation.Plan, error) {
	t.Helper()
	o, err := benchFlags(t, args...)
	if err != nil {
		return evaluation.Plan{}, err
	}
	return o.evalPlanFor()
}

func TestEvalPlanFlags(t *testing.T) {
	all := "none,phase1,full,off,query,fine-one,restricted-100,restricted-50,restricted-25,restricted-10,restricted-5,restricted-1," +
		"expanded-100,expanded-50,expanded-25,expanded-10,expanded-5,expanded-1"
	extra := ",narrow-phase1,narrow-full,deps-phase1,deps-full,deps-expanded-10,truth,truth-browse,truth-maintenance,shift-restricted,shift-expanded"
	for _, c := range []struct {
		args []string
		want string // name runs warm-up duration interval: configurations
	}{
		{nil, "quick 3 2s 1.5s 1s: none,phase1,full,off,query,fine-one,restricted-100,restricted-10,restricted-1,expanded-100,expanded-10,expanded-1" + extra},
		{[]string{"--full"}, "full 12 3s 3s 1s: " + all + extra},
		{[]string{"--tiny"}, "tiny 1 2s 1.5s 500ms: none,phase1,full,off,query,fine-one,restricted-100,restricted-1,expanded-100,expanded-1" + extra},
		{[]string{"--tiny", "--sampling", "20,0.5"}, "tiny 1 2s 1.5s 500ms: none,phase1,full,off,query,fine-one,restricted-20,restricted-0.5,expanded-20,expanded-0.5" + extra},
		{[]string{"--full", "--runs", "5", "--duration", "20s", "--warmup-time", "9s", "--interval", "4s", "--only", "none,full,none"},
			"full 5 9s 20s 4s: none,full"},
		{[]string{"--only", "phase1", "--warmup-time", "1s", "--interval", "1m"}, "quick 3 1s 1.5s 1m0s: phase1"},
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
		{[]string{"--only", "phase2"}, `--only: no configuration "phase2" (have none, phase1, full, off, query, fine-one, restricted-100`},
		{[]string{"--warmup-time", "2s", "--interval", "2s"}, "must be longer than the analysis interval"},
		{[]string{"--duration", "-1s"}, "must not be negative"},
	} {
		if _, err := evalPlanFlags(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
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
		{[]string{"bench", "--workload", "shop"}, `--workload "shop": want moobench, petclinic or realcode`},
		{[]string{"bench", "--workload", "petclinic", "--sampling", "0"}, "--sampling 0"},
	} {
		if _, _, err := tigris(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
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
	configs := []string{"none", "phase1", "full", "off", "query", "fine-one", "restricted-100", "restricted-1", "expanded-100", "expanded-1",
		"narrow-phase1", "narrow-full", "deps-phase1", "deps-full", "deps-expanded-10"}
	quality := []string{"truth", "truth-browse", "truth-maintenance", "shift-restricted", "shift-expanded"}
	for _, c := range configs {
		if !regexp.MustCompile(`(?m)^\s+` + c + `\s`).MatchString(stdout.String()) {
			t.Errorf("the table lacks %s:\n%s", c, stdout.String())
		}
	}
	for _, want := range []string{"ground truth, steady load, expanded filter: ", "shift-expanded (browse, then maintenance): followed the switch in "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, stdout.String())
		}
	}
	if !regexp.MustCompile(`(?m)^\[20/20 \d+:\d\d, ETA 0:00\] run 1/1 `).MatchString(stderr.String()) ||
		!strings.Contains(stderr.String(), "built tigris deps petclinic") {
		t.Errorf("progress:\n%s", stderr.String())
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum evaluation.Summary
	if err := json.Unmarshal(js, &sum); err != nil {
		t.Fatal(err)
	}
	all := len(configs) + len(quality)
	if !sum.Complete || len(sum.Runs) != all || len(sum.Configs) != all || sum.ScopeProbes["deps"] <= sum.ScopeProbes["module"] || sum.ScopeProbes["narrow"] == 0 {
		t.Fatalf("summary: complete %v, %d runs, %d configurations, probes %v", sum.Complete, len(sum.Runs), len(sum.Configs), sum.ScopeProbes)
	}
	for _, r := range sum.Runs {
		c := sum.Plan.Configs[slices.IndexFunc(sum.Plan.Configs, func(c evaluation.Config) bool { return c.Name == r.Config })]
		if r.Requests == 0 || r.Throughput <= 0 || r.NoAnswer != 0 || r.ServerCPUSeconds <= 0 || r.CPUPerRequestUs <= 0 {
			t.Errorf("%s: %d requests, %v req/s, %d without answer, %v s CPU, %v µs CPU/request", r.Config, r.Requests, r.Throughput, r.NoAnswer, r.ServerCPUSeconds, r.CPUPerRequestUs)
		}
		if sum.Env.NumCPU >= 2 && r.ServiceCPUs == "" {
			t.Errorf("%s: the service was not pinned (%s)", r.Config, sum.Pinning)
		}
		switch {
		case c.Plain():
			if r.MonitoredCalls != 0 || r.Records != 0 {
				t.Errorf("none: %d monitored calls, %d records", r.MonitoredCalls, r.Records)
			}
		case c.Kind == evaluation.KindPhase1:
			if r.MonitoredCalls == 0 || r.Records != 0 || r.TraceBytes != 0 {
				t.Errorf("phase1: %d monitored calls, %d records, %d trace bytes", r.MonitoredCalls, r.Records, r.TraceBytes)
			}
		case c.Kind == evaluation.KindOff || c.Kind == evaluation.KindQuery:
			// Every probe off; the query switches one on coarse and
			// writes no record.
			if r.Records != 0 || r.TraceBytes != 0 {
				t.Errorf("%s: %d records, %d trace bytes", r.Config, r.Records, r.TraceBytes)
			}
		case c.Kind == evaluation.KindFineOne:
			if r.Records == 0 {
				t.Errorf("fine-one: no record of %s", evaluation.WatchedFunction)
			}
		case c.Kind == evaluation.KindFull:
			// Every monitored call makes a record (sampling 100 %); the
			// window's edges may cut a few calls.
			if r.Records == 0 || r.Records < r.MonitoredCalls*9/10 || r.TraceBytes == 0 {
				t.Errorf("full: %d records for %d monitored calls, %d trace bytes", r.Records, r.MonitoredCalls, r.TraceBytes)
			}
		case c.Kind == evaluation.KindTruth:
			if r.Truth == nil || r.TruthFunctions == 0 {
				t.Errorf("%s: no ground truth (%d functions)", r.Config, r.TruthFunctions)
			}
		case c.Kind == evaluation.KindShift && r.SwitchAt.IsZero():
			t.Errorf("%s: the load did not switch", r.Config)
		case c.TwoPhase():
			if r.CyclesBefore == 0 || len(r.Cycles) == 0 || r.Cycles[0].Candidates == 0 {
				t.Errorf("%s: %d cycles before the window, in it %+v", r.Config, r.CyclesBefore, r.Cycles)
			}
			if r.Records > r.MonitoredCalls {
				t.Errorf("%s: %d records for %d monitored calls", r.Config, r.Records, r.MonitoredCalls)
			}
		}
	}
	for _, f := range []string{"table.txt", "throughput.svg", "cpu.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch")); err == nil {
		t.Error("scratch directories kept without --keep-scratch")
	}
}
