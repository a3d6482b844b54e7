package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Paths of the example programs, relative to the tigris module root.
const (
	ExampleDir     = "examples/moobench"      // in the main module
	OTelExampleDir = "examples/moobench-otel" // a module of its own
)

// Names of the standard binaries and configurations.
const (
	BinPlain     = "plain"     // examples/moobench, go build
	BinTigris    = "tigris"    // examples/moobench, tigris go build
	BinOTel      = "otel"      // examples/moobench-otel, go build
	BinExecTrace = "exectrace" // examples/moobench, go build -tags exectrace

	Baseline    = "baseline"
	Deactivated = "deactivated"
	Coarse      = "coarse"
	FineNull    = "fine-null"
	FineAsync   = "fine-async"
	FineSync    = "fine-sync"
	// FineAsyncDrop is the async writer with writer.on-full: drop, the policy
	// for production that prefers gaps to latency: it counts what it drops.
	FineAsyncDrop = "fine-async-drop"
	// OTelLossless is the OpenTelemetry peer with a batch span processor that
	// blocks instead of dropping (the SDK's WithBlocking option): it exports
	// every span, as tigris writes every record, so it is the peer the targets
	// compare with. OTel is the SDK's default, which drops spans when its
	// queue is full.
	OTelLossless = "otel-lossless"
	OTel         = "otel"
	// ExecTrace is the Go execution tracer with a user region per call.
	ExecTrace = "exectrace"
)

// GoBuild builds the main package in dir with `go build [args] -o exe .`, in
// dir's own module (so it builds examples/moobench-otel in its module too). The
// driver's environment is used; GOFLAGS etc. apply.
func GoBuild(dir string, args ...string) BuildFunc {
	argv := append([]string{"go", "build"}, args...)
	argv = append(argv, "-o", "{exe}", ".")
	return Command(dir, nil, argv...)
}

// TigrisBuild builds root's examples/moobench with `tigris go build -o exe .`,
// where tigris is the path of a tigris executable. tigris finds
// examples/moobench/tigris.yaml from the working directory.
func TigrisBuild(tigris, root string) BuildFunc {
	return Command(filepath.Join(root, ExampleDir), nil, tigris, "go", "build", "-o", "{exe}", ".")
}

// Command is a BuildFunc that runs argv in dir with env added to the driver's
// environment; "{exe}" in argv is replaced by the executable's path.
func Command(dir string, env []string, argv ...string) BuildFunc {
	return func(ctx context.Context, exe string) error {
		if len(argv) == 0 {
			return fmt.Errorf("empty build command")
		}
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = strings.ReplaceAll(a, "{exe}", exe)
		}
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s (in %s): %w\n%s", strings.Join(args, " "), dir, err, out.Bytes())
		}
		return nil
	}
}

// tigrisEnv is what every tigris configuration sets: nothing but the benchmark
// runs in the process.
var tigrisEnv = []string{"TIGRIS_ADMIN=off", "TIGRIS_ANALYSIS=off", "TIGRIS_SAMPLING=1"}

// StandardPlan is the MooBench plan for tigris: the baseline and the peers
// built with the go command from root (the tigris module's directory), and,
// when tigris is not nil, the tigris configurations built once with it:
// deactivated, coarse, fine-null, fine-async, fine-async-drop and fine-sync
// (see the package documentation). losslessCalls and otelCalls cap the calls
// of otel-lossless and otel (Variant.Calls; 0: no cap).
func StandardPlan(name, root string, tigris BuildFunc, losslessCalls, otelCalls int, exps ...Experiment) Plan {
	example := filepath.Join(root, ExampleDir)
	p := Plan{
		Name: name,
		Binaries: []Binary{
			{Name: BinPlain, Build: GoBuild(example),
				Description: "go build in " + ExampleDir},
			{Name: BinOTel, Build: GoBuild(filepath.Join(root, OTelExampleDir)),
				Description: "go build in " + OTelExampleDir + " (its own module: the first build downloads and compiles the OpenTelemetry SDK)"},
			{Name: BinExecTrace, Build: GoBuild(example, "-tags", "exectrace"),
				Description: "go build -tags exectrace in " + ExampleDir},
		},
		Variants: []Variant{{Name: Baseline, Binary: BinPlain, Adds: PortionT,
			Description: "no instrumentation (T)"}},
		Experiments: exps,
	}
	if tigris != nil {
		p.Binaries = append(p.Binaries, Binary{Name: BinTigris, Build: tigris,
			Description: "tigris go build in " + ExampleDir + " (the first build with a new tigris executable recompiles the standard library: a minute or more)"})
		env := func(kv ...string) []string { return append(append([]string(nil), tigrisEnv...), kv...) }
		trace := "{scratch}/trace.tgr"
		p.Variants = append(p.Variants,
			Variant{Name: Deactivated, Binary: BinTigris, Adds: PortionI, Over: Baseline,
				Env:         env("TIGRIS_MODE=off"),
				Description: "probes compiled in, off (T+I)"},
			Variant{Name: Coarse, Binary: BinTigris, Adds: PortionC, Over: Deactivated,
				// Phase 1's budget off: with it, phase 1 sheds the probe of
				// MooBench's method (a few ns a call) and C would be the off path.
				Env:         env("TIGRIS_MODE=coarse", "TIGRIS_COARSE_BUDGET=0"),
				Description: "coarse statistics, every call timed (T+I+C)"},
			Variant{Name: FineNull, Binary: BinTigris, Adds: PortionC, Over: Deactivated,
				Env:         env("TIGRIS_MODE=fine", "TIGRIS_WRITER=null"),
				Description: "fine records, discarded (T+I+C)"},
			Variant{Name: FineAsync, Binary: BinTigris, Adds: PortionW, Over: FineNull,
				Env:   env("TIGRIS_MODE=fine", "TIGRIS_WRITER=async", "TIGRIS_OUT="+trace),
				Trace: trace, Description: "fine records, async writer to a file, the default settings: nothing lost (T+I+C+W)"},
			Variant{Name: FineAsyncDrop, Binary: BinTigris, Adds: PortionW, Over: FineNull,
				Env:   env("TIGRIS_MODE=fine", "TIGRIS_WRITER=async", "TIGRIS_ON_FULL=drop", "TIGRIS_OUT="+trace),
				Trace: trace, Description: "fine records, async writer to a file, dropping when a queue is full (T+I+C+W)"},
			Variant{Name: FineSync, Binary: BinTigris, Adds: PortionW, Over: FineNull,
				Env:   env("TIGRIS_MODE=fine", "TIGRIS_WRITER=sync", "TIGRIS_OUT="+trace),
				Trace: trace, Description: "fine records, sync writer to a file (T+I+C+W)"},
		)
	}
	p.Variants = append(p.Variants,
		Variant{Name: OTelLossless, Binary: BinOTel, Adds: PortionPeer, Over: Baseline,
			Args: []string{"-otel-out", "{scratch}/spans.json", "-otel-blocking"}, Calls: losslessCalls,
			Description: "OpenTelemetry SDK span, blocking batch processor (every span exported), stdouttrace to a file"},
		Variant{Name: OTel, Binary: BinOTel, Adds: PortionPeer, Over: Baseline,
			Args: []string{"-otel-out", "{scratch}/spans.json"}, Calls: otelCalls,
			Description: "OpenTelemetry SDK span, batch processor with its defaults (drops when its queue is full), stdouttrace to a file"},
		Variant{Name: ExecTrace, Binary: BinExecTrace, Adds: PortionPeer, Over: Baseline,
			Args:        []string{"-trace-out", "{scratch}/exec.trace"},
			Description: "Go execution tracer, a runtime/trace user region per call, written to a file"},
	)
	// Without tigris, experiments keep the configurations they name that
	// remain, and go when none does.
	var kept []Experiment
	for _, e := range p.Experiments {
		if len(e.Configs) > 0 {
			e.Configs = slices.DeleteFunc(slices.Clone(e.Configs), func(n string) bool { return p.Variant(n) == nil })
			if len(e.Configs) == 0 {
				continue
			}
		}
		kept = append(kept, e)
	}
	p.Experiments = kept
	return p
}

// longConfigs are the configurations of the 500 µs experiments: the dropping
// ones drop nothing there and would only lengthen the plan.
var longConfigs = []string{Deactivated, Coarse, FineNull, FineAsync, FineSync, OTelLossless, ExecTrace}

// scalingConfigs are the configurations of the goroutine series.
var scalingConfigs = []string{FineNull, FineAsync, FineAsyncDrop}

// scaling returns the goroutine series' experiments for method time 0: base
// with 2 and 8 benchmark goroutines, calls per goroutine and runs each.
func scaling(base Params, calls, runs int) []Experiment {
	var out []Experiment
	for _, g := range []int{2, 8} {
		q := base
		q.Goroutines, q.Calls, q.Runs = g, calls, runs
		out = append(out, Experiment{Name: fmt.Sprintf("mt0-g%d", g), Params: q, Configs: scalingConfigs, Scaling: true})
	}
	return out
}

// The plans differ in calls and runs; every one has the thesis' depth 10 and
// warm-up share 0.5, one benchmark goroutine in its main experiments, and a
// series with 2 and 8 goroutines at method time 0 (the writer's cost per
// record must not grow with the producers).
//
// QuickPlan takes about two minutes on the 2-core development machine, a cold
// tigris build included: 5 runs of every configuration with 300,000 calls of
// method time 0 (the upper bound of the overhead; the OpenTelemetry peers,
// whose spans cost microseconds when exported, make 10,000 (lossless) and
// 100,000), 3 with 1,000 calls of 500 µs (the lower bound), and 3 runs of the
// series with 25,000 calls per goroutine.
func QuickPlan(root string, tigris BuildFunc) Plan {
	mt0 := Params{Calls: 300_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 5, Goroutines: 1}
	return StandardPlan("quick", root, tigris, 10_000, 100_000, append([]Experiment{
		{Name: "mt0", Params: mt0},
		{Name: "mt500us", Params: Params{Calls: 1_000, Warmup: 0.5, Depth: 10, MethodTime: 500 * time.Microsecond, Runs: 3, Goroutines: 1},
			Configs: longConfigs},
	}, scaling(mt0, 25_000, 3)...)...)
}

// FullPlanLongCalls is the number of calls per run of FullPlan's 500 µs
// experiment: the thesis' 2,000,000 calls of 500 µs are 1,000 s per run, so
// 10 runs of 8 configurations would take 22 hours. 10,000 calls (5 s per run,
// 5,000 measured after the warm-up, 50,000 per configuration) take about 7
// minutes for all of them. With a long method time the overhead is a tiny
// share of each call and the medians settle within a few thousand calls;
// what the extra calls of the thesis would add is a narrower confidence
// interval of the mean, which on a shared machine measures preemption anyway.
const FullPlanLongCalls = 10_000

// FullPlan is MooBench's default (thesis, section 8.3): 10 runs in fresh
// processes, 2,000,000 calls, the first half discarded as warm-up, depth 10,
// method time 0 (otel-lossless: 50,000 calls, 0.6 GB of JSON per run; an
// exported span costs 20–30 µs at the mean under stress) — and
// the same with method time 500 µs, but with FullPlanLongCalls calls per run
// instead of 2,000,000 (see there) — and 5 runs of the goroutine series with
// 500,000 calls per goroutine. About 25 minutes on the development machine.
func FullPlan(root string, tigris BuildFunc) Plan {
	mt0 := Params{Calls: 2_000_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 10, Goroutines: 1}
	return StandardPlan("full", root, tigris, 50_000, 0, append([]Experiment{
		{Name: "mt0", Params: mt0},
		{Name: "mt500us", Params: Params{Calls: FullPlanLongCalls, Warmup: 0.5, Depth: 10, MethodTime: 500 * time.Microsecond, Runs: 10, Goroutines: 1},
			Configs: longConfigs},
	}, scaling(mt0, 500_000, 5)...)...)
}

// TinyPlan is a smoke test for CI: 2 runs × 20,000 calls of method time 0, a
// tenth of the usual clock pairs, and the series with 2 goroutines and 5,000
// calls each; a few seconds of runs.
func TinyPlan(root string, tigris BuildFunc) Plan {
	mt0 := Params{Calls: 20_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 2, Goroutines: 1, ClockPairs: 200_000}
	return StandardPlan("tiny", root, tigris, 2_000, 0, Experiment{Name: "mt0", Params: mt0}, scaling(mt0, 5_000, 1)[0])
}

// ModulePath is the tigris module's path.
const ModulePath = "github.com/tigrisgo/tigris"

// FindRoot returns the directory of the tigris module's go.mod, looking upward
// from dir.
func FindRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && modulePath(b) == ModulePath {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod of %s in %s or above", ModulePath, dir)
		}
	}
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
