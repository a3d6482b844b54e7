package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/workdir"
)

// runCLI runs the tigris command line in an empty directory (no tigris.yaml).
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	workdir.Chdir(t, t.TempDir())
	t.Setenv("TIGRIS_CONFIG", "")
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// TestAnalyzeFlags checks that the flags reach package offline, whose tests
// cover the analysis itself. The trace (read_test.go) has main.load called
// twice, once failing, and main.run once.
func TestAnalyzeFlags(t *testing.T) {
	dir := t.TempDir()
	trace := writeTrace(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "criteria: (more frequent ∪ most expensive) ∩ least changeable\ninput:    " + trace + " (trace file, sampled calls only): 2 functions, 2 called\n"},
		{[]string{"--criteria", "least frequent"}, "selected: 1 of 2\n  main.run()\n      frequent: least (count 1)\n"},
		{[]string{"--criteria", "most frequent", "--metric", "expensive=count, frequent=errors"}, "selected: 1 of 2\n  main.load(string) error\n      frequent: most (errors 1)\n"},
	} {
		out, err := runCLI(t, append(append([]string{"analyze"}, c.args...), trace)...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("analyze %q: err %v; want output containing\n%s\ngot\n%s", c.args, err, c.want, out)
		}
	}

	cfg := filepath.Join(dir, "tigris.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nanalysis:\n  criteria: least frequent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "analyze", "--config", cfg, trace); err != nil || !strings.Contains(out, "criteria: least frequent\n") {
		t.Errorf("--config: err %v\n%s", err, out)
	}
	workdir.Chdir(t, t.TempDir())
	t.Setenv("TIGRIS_CONFIG", cfg)
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"analyze", trace})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "criteria: least frequent\n") {
		t.Errorf("TIGRIS_CONFIG: err %v\n%s", err, out.String())
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--criteria", "more cheap", trace}, "analyze: "},
		{[]string{"--metric", "frequent", trace}, `analyze: --metric "frequent": want criterion=metric`},
		{[]string{"--config", filepath.Join(dir, "none.yaml"), trace}, "none.yaml"},
		{[]string{filepath.Join(dir, "missing.tgr")}, "missing.tgr"},
		{nil, "accepts 1 arg(s)"},
	} {
		if out, err := runCLI(t, append([]string{"analyze"}, c.args...)...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("analyze %q: err %v, want one containing %q\n%s", c.args, err, c.want, out)
		}
	}
}
