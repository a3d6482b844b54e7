package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench"
)

// benchFlags parses args as the bench command's flags.
func benchFlags(t *testing.T, args ...string) (*benchOptions, error) {
	t.Helper()
	var o benchOptions
	cmd := &cobra.Command{Use: "bench"}
	o.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	o.changed = cmd.Flags().Changed
	return &o, nil
}

// benchPlanFor returns the MooBench plan the flags args ask for, with a tigris
// build that is never run.
func benchPlanFor(t *testing.T, args ...string) (bench.Plan, error) {
	t.Helper()
	o, err := benchFlags(t, args...)
	if err != nil {
		return bench.Plan{}, err
	}
	return o.plan("/repo", func(context.Context, string) error { return nil })
}

func TestBenchPlanFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // plan name, configurations, then experiment: runs×calls depth mt goroutines warm-up
	}{
		{nil, "quick baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt0 5×300000 d10 0s g1 w0.5; mt500us 3×1000 d10 500µs g1 w0.5; mt0-g2 3×25000 d10 0s g2 w0.5; mt0-g8 3×25000 d10 0s g8 w0.5"},
		{[]string{"--quick"}, "quick baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt0 5×300000 d10 0s g1 w0.5; mt500us 3×1000 d10 500µs g1 w0.5; mt0-g2 3×25000 d10 0s g2 w0.5; mt0-g8 3×25000 d10 0s g8 w0.5"},
		{[]string{"--full"}, "full baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt0 10×2000000 d10 0s g1 w0.5; mt500us 10×10000 d10 500µs g1 w0.5; mt0-g2 5×500000 d10 0s g2 w0.5; mt0-g8 5×500000 d10 0s g8 w0.5"},
		{[]string{"--tiny"}, "tiny baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt0 2×20000 d10 0s g1 w0.5; mt0-g2 1×5000 d10 0s g2 w0.5"},
		{[]string{"--full", "--runs", "4", "--calls", "1000", "--depth", "3", "--goroutines", "2", "--warmup", "0.25"},
			"full baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt0 4×1000 d3 0s g2 w0.25; mt500us 4×1000 d3 500µs g2 w0.25"},
		{[]string{"--full", "--method-time", "500us,1ms"},
			"full baseline,deactivated,coarse,fine-null,fine-async,fine-async-drop,fine-sync,otel-lossless,otel,exectrace mt500us 10×10000 d10 500µs g1 w0.5; mt1ms 10×2000000 d10 1ms g1 w0.5"},
		{[]string{"--tiny", "--only", "fine-async,otel-lossless"}, "tiny baseline,deactivated,fine-null,fine-async,otel-lossless mt0 2×20000 d10 0s g1 w0.5; mt0-g2 1×5000 d10 0s g2 w0.5"},
		{[]string{"--tiny", "--only", "coarse,exectrace"}, "tiny baseline,deactivated,coarse,exectrace mt0 2×20000 d10 0s g1 w0.5"},
	} {
		p, err := benchPlanFor(t, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		var names, exps []string
		for _, v := range p.Variants {
			names = append(names, v.Name)
		}
		for _, e := range p.Experiments {
			q := e.Params
			exps = append(exps, fmt.Sprintf("%s %d×%d d%d %v g%d w%g", e.Name, q.Runs, q.Calls, q.Depth, q.MethodTime, q.Goroutines, q.Warmup))
		}
		if got := p.Name + " " + strings.Join(names, ",") + " " + strings.Join(exps, "; "); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--quick", "--full"}, "exclude each other"},
		{[]string{"--calls", "-1"}, "must not be negative"},
		{[]string{"--warmup", "1"}, "--warmup"},
		{[]string{"--method-time", "-1s"}, "--method-time"},
		{[]string{"--method-time", "0,0"}, "duplicated"},
		{[]string{"--only", "nope"}, `--only: plan "quick" has no configuration "nope"`},
		{[]string{"--depth", "x"}, "invalid argument"},
	} {
		if _, err := benchPlanFor(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestBenchFromErrors(t *testing.T) {
	dir := t.TempDir()
	// tigris (read_test.go) runs the command line through the cobra tree.
	if _, _, err := tigris(t, "bench", "--from", dir, "--full"); err == nil || !strings.Contains(err.Error(), "does not take --full") {
		t.Errorf("--from with --full: %v", err)
	}
	if _, _, err := tigris(t, "bench", "--from", dir); err == nil || !strings.Contains(err.Error(), "results.json") {
		t.Errorf("--from an empty directory: %v", err)
	}
	if _, _, err := tigris(t, "bench", "--root", dir, "--tiny"); err == nil || !strings.Contains(err.Error(), "--root") {
		t.Errorf("--root outside the tigris module: %v", err)
	}
	if _, _, err := tigris(t, "bench", "extra"); err == nil {
		t.Error("an argument: no error")
	}
}

// TestBenchTinyEndToEnd builds the tigris command, runs `tigris bench --tiny`
// with it (so os.Executable is a real tigris and the tigris configurations are
// built through it with the real toolchain; the OpenTelemetry peer builds in
// its own module, from the module cache or proxy), then summarizes the results
// again with --from. About 15 s with warm build caches; the first build with a
// new tigris executable recompiles the standard library (a minute or more).
// Only the shape of the results is checked, never a timing.
func TestBenchTinyEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the MooBench examples")
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
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, exe, append([]string{"bench"}, args...)...)
		cmd.Env = append(env, "TIGRIS_MODE=fine") // must reach no run but those that set it
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tigris bench %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	stdout, stderr := run("--tiny", "--out", dir)

	configs := []string{bench.Baseline, bench.Deactivated, bench.Coarse, bench.FineNull, bench.FineAsync, bench.FineAsyncDrop,
		bench.FineSync, bench.OTelLossless, bench.OTel, bench.ExecTrace}
	for _, want := range append([]string{"== mt0: depth 10", "Per monitored call", "Targets (docs/performance.md",
		"== Goroutine series (mt0, mt0-g2)", "Kieker's published"}, configs...) {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	// Every configuration's records or spans, written and lost, in the table.
	if !regexp.MustCompile(`records or spans +written +lost +lost %`).MatchString(stdout) ||
		!regexp.MustCompile(`(?m)^ +fine-async +400000 +400000 +0 +0\.00 `).MatchString(stdout) {
		t.Errorf("the table does not report records written and lost per configuration:\n%s", stdout)
	}
	// 10 configurations × 2 runs at one goroutine, 5 × 1 at two.
	if !regexp.MustCompile(`(?m)^\[25/25 \d+:\d\d, ETA 0:00\] mt0-g2 run 1/1 fine-async-drop `).MatchString(stderr) ||
		!strings.Contains(stderr, "build tigris") {
		t.Errorf("progress:\n%s", stderr)
	}
	for _, f := range []string{"results.json", "summary.json", "table.txt", "chart-mt0.svg", "raw.csv.gz", "raw/mt0/fine-async/run-02.bin"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := bench.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Experiments) != 2 || len(s.Experiments[0].Configs) != len(configs) || s.Scaling == nil {
		t.Fatalf("summary: %+v", s.Experiments)
	}
	e := s.Experiments[0]
	if e.ClockPairNs <= 0 || e.Peer != bench.OTelLossless || len(e.Peers) != 3 || len(e.Targets) != 5 {
		t.Errorf("clock pair %v, peer %q of %q, %d targets", e.ClockPairNs, e.Peer, e.Peers, len(e.Targets))
	}
	for _, c := range e.Configs {
		calls := 20_000
		if c.Name == bench.OTelLossless {
			calls = 2_000 // capped
		}
		if c.Runs != 2 || c.Stats.N != int64(2*calls/2) || c.AllocsPerCall < 0 || c.ClockPairNs <= 0 || c.CallsPerSec <= 0 || c.CPUPerCall <= 0 {
			t.Errorf("%s: %d runs, n = %d, allocations %v, clock pair %v, %v calls/s, %v ns CPU per call",
				c.Name, c.Runs, c.Stats.N, c.AllocsPerCall, c.ClockPairNs, c.CallsPerSec, c.CPUPerCall)
		}
		countable := c.Name == bench.FineAsync || c.Name == bench.FineAsyncDrop || c.Name == bench.FineSync ||
			c.Name == bench.OTel || c.Name == bench.OTelLossless
		if countable != (c.Trace != nil) {
			t.Errorf("%s: trace count %+v", c.Name, c.Trace)
		} else if countable && (c.Trace.Expected != int64(2*calls*10) || c.Trace.Unaccounted() != 0) {
			t.Errorf("%s: %+v; want %d records or spans, each written or counted as lost", c.Name, c.Trace, 2*calls*10)
		}
		// The defaults lose nothing, nor does the blocking peer.
		if (c.Name == bench.FineAsync || c.Name == bench.FineSync || c.Name == bench.OTelLossless) && c.Trace != nil && c.Trace.Lost != 0 {
			t.Errorf("%s lost %d", c.Name, c.Trace.Lost)
		}
	}

	again, _ := run("--from", dir)
	if !strings.Contains(again, "== mt0: depth 10") || !strings.Contains(again, "fine-async") {
		t.Errorf("--from printed:\n%s", again)
	}
}

// buildTigris builds this command into dir, for tests that need os.Executable
// to be a real tigris, and returns it with an environment free of TIGRIS_*
// and GOFLAGS. GOCACHE stays the go command's own, which the integration
// tests use too (integration/internal/itest): the tigris binary is the same
// there, so builds of the same example with the same pointcuts reuse each
// other's standard library instead of compiling it once more.
func buildTigris(ctx context.Context, t *testing.T, goExe, dir string) (exe string, env []string) {
	t.Helper()
	exe = filepath.Join(dir, "tigris")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "TIGRIS_") || strings.HasPrefix(kv, "GOFLAGS=")
	})
	build := exec.CommandContext(ctx, goExe, "build", "-o", exe, ".")
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tigris: %v\n%s", err, out)
	}
	return exe, env
}
