package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDriverEndToEnd builds the baseline and the OpenTelemetry peer (a module of
// its own: its dependencies come from the module cache or proxy), runs the tiny
// plan (2 runs × 20,000 calls) and summarizes it. It takes several seconds, more
// on a cold cache, so -short skips it.
func TestDriverEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the examples")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p := TinyPlan(root, nil)
	dir := t.TempDir()
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t.Setenv("TIGRIS_MODE", "fine") // must not reach the runs
	res, err := (&Driver{Dir: dir, Progress: &progress}).Run(ctx, p)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if len(res.Builds) != 3 || len(res.Runs) != 8 {
		t.Fatalf("%d builds, %d runs; want 3 and 8\n%s", len(res.Builds), len(res.Runs), progress.String())
	}
	// Interleaved: run 1 of every configuration, then run 2.
	var order []string
	for _, r := range res.Runs {
		order = append(order, r.Variant+"/"+string(rune('0'+r.Run)))
		if r.Timings != nil {
			t.Errorf("%s run %d: the driver kept the timings in memory", r.Variant, r.Run)
		}
		calls := 20_000
		if r.Variant == OTelLossless {
			calls = 2_000 // capped
		}
		if r.Calls != calls || r.Goroutines != 1 || r.Depth != 10 || r.ClockPairNs <= 0 {
			t.Errorf("%s run %d: %+v", r.Variant, r.Run, r)
		}
		if _, err := os.Stat(r.File); err != nil {
			t.Errorf("raw data: %v", err)
		}
	}
	if got := strings.Join(order, " "); got != "baseline/1 otel-lossless/1 otel/1 exectrace/1 baseline/2 otel-lossless/2 otel/2 exectrace/2" {
		t.Errorf("run order %s", got)
	}
	// The lossless peer exports every span; the execution tracer writes its file.
	for _, r := range res.RunsOf("mt0", OTelLossless) {
		if tc := r.Trace; tc == nil || tc.Expected != 20_000 || tc.Written != 20_000 || tc.Lost != 0 {
			t.Errorf("otel-lossless run %d: %+v", r.Run, tc)
		}
	}
	if x := res.RunsOf("mt0", ExecTrace); len(x) != 2 || x[0].OutBytes == 0 || x[0].Trace != nil || x[0].CPU <= 0 {
		t.Errorf("exectrace runs: %+v", x)
	}
	otel := res.RunsOf("mt0", OTel)
	if len(otel) != 2 || otel[0].Trace == nil || otel[0].Trace.Unit != "spans" || otel[0].Trace.Expected != 200_000 ||
		otel[0].Trace.Unaccounted() != 0 {
		t.Errorf("OpenTelemetry runs' span counts: %+v", otel[0].Trace)
	}
	if otel[0].OutBytes == 0 {
		t.Error("the OpenTelemetry run wrote no spans to its file")
	}
	if res.RunsOf("mt0", Baseline)[0].Trace != nil {
		t.Error("the baseline has a record count")
	}
	if !regexp.MustCompile(`\[8/8 \d+:\d\d, ETA 0:00\] mt0 run 2/2 exectrace `).MatchString(progress.String()) {
		t.Errorf("progress:\n%s", progress.String())
	}

	s, err := Report(filepath.Join(dir, "report"), res, true)
	if err != nil {
		t.Fatal(err)
	}
	e := s.Experiments[0]
	base, peer := e.Config(Baseline), e.Config(OTel)
	if base.Stats.N != 2*10_000 || peer.Stats.N != 2*10_000 {
		t.Errorf("pooled %d and %d measurements, want 20,000 each", base.Stats.N, peer.Stats.N)
	}
	// Only sanity, never timings: a span costs something.
	if !(peer.Stats.Median > base.Stats.Median) || e.ClockPairNs <= 0 {
		t.Errorf("baseline median %v, otel median %v, clock pair %v", base.Stats.Median, peer.Stats.Median, e.ClockPairNs)
	}
	var table bytes.Buffer
	WriteTable(&table, s)
	t.Logf("\n%s", table.String())
}

// A failing build stops the plan before anything runs.
func TestDriverBuildFailure(t *testing.T) {
	p := TinyPlan("/nonexistent", nil)
	res, err := (&Driver{Dir: t.TempDir()}).Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "building plain") {
		t.Fatalf("error %v, want a build failure", err)
	}
	if len(res.Runs) != 0 {
		t.Errorf("%d runs after a failed build", len(res.Runs))
	}
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"PATH=/bin", "TIGRIS_MODE=fine", "OTEL_SDK_DISABLED=true", "HOME=/root"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Errorf("childEnv kept %v", got)
	}
}
