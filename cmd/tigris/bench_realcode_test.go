package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/bench/realcode"
)

func TestRealcodeWorkloadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--workload", "realcode", "--calls", "10"}, "--workload realcode does not take --calls"},
		{[]string{"bench", "--workload", "realcode", "--duration", "1s"}, "--workload realcode does not take --duration"},
		{[]string{"bench", "--workload", "realcode", "--modules", "nosuch"}, `--modules: no module "nosuch"`},
		{[]string{"bench", "--workload", "realcode", "--only", "slow"}, `--only: no variant "slow"`},
		{[]string{"bench", "--workload", "realcode", "--tiny", "--full"}, "exclude each other"},
		{[]string{"bench", "--workload", "realcode", "--benchtime", "-1s"}, "must not be negative"},
		{[]string{"bench", "--workload", "realcode", "--from", "x", "--runs", "2"}, "it does not take --runs"},
		{[]string{"bench", "--workload", "realcode", "--from", "x", "--modules", "toml"}, "it does not take --modules"},
		{[]string{"bench", "--workload", "realcode", "--from", t.TempDir()}, "results.json: no such file"},
		{[]string{"bench", "--modules", "toml"}, "--modules only apply to --workload realcode"},
		{[]string{"bench", "--workload", "petclinic", "--benchtime", "1s"}, "--workload petclinic does not take --benchtime"},
	} {
		if _, _, err := tigris(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestRealcodeFrom summarizes made-up results again with --from.
func TestRealcodeFrom(t *testing.T) {
	dir := t.TempDir()
	p, err := realcode.TinyPlan().OnlyModules("httprouter")
	if err != nil {
		t.Fatal(err)
	}
	res := &realcode.Results{Workload: realcode.Workload, Plan: p}
	for round := range p.Rounds {
		for i, v := range p.Variants {
			f := 1 + float64(i)/10 + float64(round)/100
			res.Runs = append(res.Runs, realcode.Run{Round: round, Module: "httprouter", Variant: v.Name,
				NsPerOp: map[string]float64{"BenchmarkAllowed/Global": 5 * f, "BenchmarkAllowed/Path": 300 * f}})
		}
	}
	if err := realcode.WriteResults(filepath.Join(dir, "results.json"), res); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := tigris(t, "bench", "--workload", "realcode", "--from", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"httprouter", "floor", "fine-all", "geometric mean", "1.10 × [", "httprouter Allowed/Path"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"table.txt", "table.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}
