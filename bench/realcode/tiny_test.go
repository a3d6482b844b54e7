package realcode

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTinyPlanEndToEnd runs `tigris bench --workload realcode --tiny` with a
// tigris built from this checkout against the real toolchain and the module
// proxy: it downloads and copies the tiny plan's modules, runs tigris init in
// them, builds every variant's test binary and runs two rounds. The table
// must have every variant of every module with a finite ratio and interval,
// and no run may have failed. About a minute on 2 cores with a warm build
// cache.
func TestTinyPlanEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds real modules with the go command; skipped in -short mode")
	}
	goExe, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	tigris := filepath.Join(tmp, "tigris")
	build := exec.Command(goExe, "build", "-o", tigris, "./cmd/tigris")
	build.Dir, build.Env = root, goEnv()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tigris: %v\n%s", err, out)
	}
	out := filepath.Join(tmp, "results")
	start := time.Now()
	cmd := exec.Command(tigris, "bench", "--workload", "realcode", "--tiny", "--out", out)
	cmd.Dir = root
	cmd.Env = goEnv()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tigris bench --workload realcode --tiny: %v\n%s\n%s", err, stderr.String(), stdout.String())
	}
	t.Logf("the tiny plan took %v:\n%s", time.Since(start).Round(time.Second), stdout.String())

	res, err := ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(out, "table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(table) != stdout.String() {
		t.Error("table.txt differs from the table printed")
	}
	if _, err := os.Stat(filepath.Join(out, "table.md")); err != nil {
		t.Error(err)
	}
	tiny := TinyPlan()
	if len(res.Modules) != len(tiny.Modules) || len(res.Runs) != tiny.Rounds*len(tiny.Modules)*len(tiny.Variants) {
		t.Errorf("%d modules and %d runs, want %d and %d", len(res.Modules), len(res.Runs), len(tiny.Modules), tiny.Rounds*len(tiny.Modules)*len(tiny.Variants))
	}
	for _, n := range res.Notes {
		t.Logf("note: %s", n)
	}
	for _, m := range res.Modules {
		for b, e := range m.BuildErrors {
			t.Errorf("%s: the %s build failed: %s", m.Name, b, e)
		}
		if p := m.Probes[BuildDefault]; p.Instrumented == 0 || p.Instrumented > p.Functions {
			t.Errorf("%s: the default build probes %d of %d functions", m.Name, p.Instrumented, p.Functions)
		}
		if !strings.Contains(m.Config, "monitor:") {
			t.Errorf("%s: no tigris.yaml from tigris init recorded", m.Name)
		}
		sh := m.Shares
		if sh == nil {
			t.Errorf("%s: no shares from the CPU profile: %s", m.Name, m.ProfileError)
			continue
		}
		if sh.Samples == 0 || sh.CPUSeconds <= 0 {
			t.Errorf("%s: the profile has %d samples (%v s) in the module", m.Name, sh.Samples, sh.CPUSeconds)
		}
		for what, x := range map[string]float64{"inclusive": sh.Inclusive, "exclusive": sh.Exclusive, "measured": sh.Measured} {
			if !(x >= 0 && x <= 1) {
				t.Errorf("%s: %s share %v", m.Name, what, x)
			}
		}
	}
	if !strings.Contains(string(table), "Against the targets") {
		t.Error("the table has no shares")
	}
	for _, run := range res.Runs {
		if run.Error != "" {
			t.Errorf("round %d %s %s failed: %s", run.Round+1, run.Module, run.Variant, run.Error)
		}
	}
	s := Summarize(res)
	finite := func(iv Interval) error {
		for _, x := range []float64{iv.Ratio, iv.Lo, iv.Hi} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
				return errors.New("not a finite positive ratio with an interval")
			}
		}
		if iv.Rounds != tiny.Rounds {
			return errors.New("not over every round")
		}
		return nil
	}
	for _, v := range tiny.Variants[1:] {
		for _, m := range s.Modules {
			if len(m.Benchmarks) == 0 {
				t.Errorf("%s: no benchmark measured", m.Name)
			}
			if err := finite(m.Variants[v.Name]); err != nil {
				t.Errorf("%s %s: %+v: %v", m.Name, v.Name, m.Variants[v.Name], err)
			}
		}
		if err := finite(s.Overall[v.Name]); err != nil {
			t.Errorf("overall %s: %+v: %v", v.Name, s.Overall[v.Name], err)
		}
		if !strings.Contains(string(table), v.Name) {
			t.Errorf("the table has no column %s", v.Name)
		}
	}
	// Fine records went to a scratch directory, not into the copies or the
	// repository.
	if matches, _ := filepath.Glob(filepath.Join(root, "tigris-out", "*.test-*.tgr")); len(matches) > 0 {
		t.Errorf("trace files left in the repository: %v", matches)
	}
}

// repoRoot is the root module's directory, found upward from the test's.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/tigrisgo/tigris\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no root module above the test")
		}
		dir = parent
	}
}
