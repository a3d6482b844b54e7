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
	BinPlain  = "plain"  // examples/moobench, go build
	BinTigris = "tigris" // examples/moobench, tigris go build
	BinOTel   = "otel"   // examples/moobench-otel, go build

	Baseline    = "baseline"
	Deactivated = "deactivated"
	Coarse      = "coarse"
	FineNull    = "fine-null"
	FineAsync   = "fine-async"
	FineSync    = "fine-sync"
	OTel        = "otel"
	// OTelBlocking is the peer with a batch span processor that blocks instead
	// of dropping spans when its queue is full, FineAsyncBlock the async writer
	// that makes the producer wait instead of dropping (WithBlocking).
	OTelBlocking   = "otel-blocking"
	FineAsyncBlock = "fine-async-block"
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

// StandardPlan is the MooBench plan for tigris: the baseline and the
// OpenTelemetry peer built with the go command from root (the tigris module's
// directory), and, when tigris is not nil, the tigris configurations built once
// with it: deactivated, coarse, fine-null, fine-async and fine-sync (see the
// package documentation).
func StandardPlan(name, root string, tigris BuildFunc, exps ...Experiment) Plan {
	p := Plan{
		Name: name,
		Binaries: []Binary{
			{Name: BinPlain, Build: GoBuild(filepath.Join(root, ExampleDir)),
				Description: "go build in " + ExampleDir},
			{Name: BinOTel, Build: GoBuild(filepath.Join(root, OTelExampleDir)),
				Description: "go build in " + OTelExampleDir + " (its own module: the first build downloads and compiles the OpenTelemetry SDK)"},
		},
		Variants: []Variant{{Name: Baseline, Binary: BinPlain, Adds: PortionT,
			Description: "no instrumentation (T)"}},
		Experiments: exps,
	}
	if tigris != nil {
		p.Binaries = append(p.Binaries, Binary{Name: BinTigris, Build: tigris,
			Description: "tigris go build in " + ExampleDir + " (the first build with a new tigris executable recompiles the standard library: a minute or more)"})
		env := func(kv ...string) []string { return append(append([]string(nil), tigrisEnv...), kv...) }
		p.Variants = append(p.Variants,
			Variant{Name: Deactivated, Binary: BinTigris, Adds: PortionI, Over: Baseline,
				Env:         env("TIGRIS_MODE=off"),
				Description: "probes compiled in, off (T+I)"},
			Variant{Name: Coarse, Binary: BinTigris, Adds: PortionC, Over: Deactivated,
				Env:         env("TIGRIS_MODE=coarse"),
				Description: "coarse statistics (T+I+C)"},
			Variant{Name: FineNull, Binary: BinTigris, Adds: PortionC, Over: Deactivated,
				Env:         env("TIGRIS_MODE=fine", "TIGRIS_WRITER=null"),
				Description: "fine records, discarded (T+I+C)"},
			Variant{Name: FineAsync, Binary: BinTigris, Adds: PortionW, Over: FineNull,
				Env:         env("TIGRIS_MODE=fine", "TIGRIS_WRITER=async", "TIGRIS_OUT={scratch}/trace.tgr"),
				Trace:       "{scratch}/trace.tgr",
				Description: "fine records, async writer to a file (T+I+C+W)"},
			Variant{Name: FineSync, Binary: BinTigris, Adds: PortionW, Over: FineNull,
				Env:         env("TIGRIS_MODE=fine", "TIGRIS_WRITER=sync", "TIGRIS_OUT={scratch}/trace.tgr"),
				Trace:       "{scratch}/trace.tgr",
				Description: "fine records, sync writer to a file (T+I+C+W)"},
		)
	}
	p.Variants = append(p.Variants, Variant{Name: OTel, Binary: BinOTel, Adds: PortionPeer, Over: Baseline,
		Args:        []string{"-otel-out", "{scratch}/spans.json"},
		Description: "OpenTelemetry SDK span, batch processor, stdouttrace to a file"})
	return p
}

// WithBlocking returns p with the configurations that never drop a record:
// otel-blocking, the OpenTelemetry example with -otel-blocking (a batch span
// processor that makes the application wait for the exporter), and, if p has
// the tigris configurations, fine-async-block, the async writer with
// TIGRIS_ON_FULL=block. Under stress (method time 0) both default writers drop
// what they cannot keep up with, which makes them look cheaper than they are;
// these two show what writing everything costs.
func WithBlocking(p Plan) Plan {
	p.Variants = slices.Clone(p.Variants)
	if v := p.Variant(FineAsync); v != nil {
		b := *v
		b.Name = FineAsyncBlock
		b.Env = append(slices.Clone(v.Env), "TIGRIS_ON_FULL=block")
		b.Description = "fine records, async writer to a file, blocking when its queue is full (T+I+C+W)"
		// Beside the other tigris configurations, before the peers.
		i := slices.IndexFunc(p.Variants, func(v Variant) bool { return v.Adds == PortionPeer })
		if i < 0 {
			i = len(p.Variants)
		}
		p.Variants = slices.Insert(p.Variants, i, b)
	}
	p.Variants = append(p.Variants, Variant{Name: OTelBlocking, Binary: BinOTel,
		Adds: PortionPeer, Over: Baseline,
		Args:        []string{"-otel-out", "{scratch}/spans.json", "-otel-blocking"},
		Description: "OpenTelemetry SDK span, blocking batch processor, stdouttrace to a file"})
	return p
}

// The three plans differ in calls and runs only; every one has the thesis'
// depth 10 and warm-up share 0.5 and one benchmark goroutine.
//
// QuickPlan takes about two minutes on the 2-core development machine, a cold
// tigris build included (40–70 s of that; 2 min 37 s were measured with other
// builds running, load up to 5.7; with cached builds about 1.5 minutes): 5
// runs of every configuration with 300,000 calls of method time 0 (the upper
// bound of the overhead) and 5 with 1,000 calls of 500 µs (the lower bound).
// Half of the method-time-0 run time is the OpenTelemetry peer's: a span
// costs far more than a tigris record.
func QuickPlan(root string, tigris BuildFunc) Plan {
	return StandardPlan("quick", root, tigris,
		Experiment{Name: "mt0", Params: Params{Calls: 300_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 5, Goroutines: 1}},
		Experiment{Name: "mt500us", Params: Params{Calls: 1_000, Warmup: 0.5, Depth: 10, MethodTime: 500 * time.Microsecond, Runs: 5, Goroutines: 1}},
	)
}

// FullPlanLongCalls is the number of calls per run of FullPlan's 500 µs
// experiment: the thesis' 2,000,000 calls of 500 µs are 1,000 s per run, so
// 10 runs of 7 configurations would take 19.4 hours. 20,000 calls (10 s per
// run, 10,000 measured after the warm-up, 100,000 per configuration) take
// about 12 minutes for all seven. With a long method time the overhead is a
// tiny share of each call and the medians settle within a few thousand calls;
// what the extra calls of the thesis would add is a narrower confidence
// interval of the mean, which on a shared machine measures preemption anyway.
const FullPlanLongCalls = 20_000

// FullPlan is MooBench's default (thesis, section 8.3): 10 runs in fresh
// processes, 2,000,000 calls, the first half discarded as warm-up, depth 10,
// method time 0 — and the same with method time 500 µs, but with
// FullPlanLongCalls calls per run instead of 2,000,000 (see there). About 25
// minutes on the development machine (25 min 35 s measured, a cold tigris
// build included, with other builds running): 6.5 minutes are the
// OpenTelemetry peer's method-time-0 runs (19–62 s each), 13 minutes the
// 500 µs experiment.
func FullPlan(root string, tigris BuildFunc) Plan {
	return StandardPlan("full", root, tigris,
		Experiment{Name: "mt0", Params: Params{Calls: 2_000_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 10, Goroutines: 1}},
		Experiment{Name: "mt500us", Params: Params{Calls: FullPlanLongCalls, Warmup: 0.5, Depth: 10, MethodTime: 500 * time.Microsecond, Runs: 10, Goroutines: 1}},
	)
}

// TinyPlan is a smoke test for CI: 2 runs × 20,000 calls of method time 0, a
// tenth of the usual clock pairs; a few seconds of runs.
func TinyPlan(root string, tigris BuildFunc) Plan {
	return StandardPlan("tiny", root, tigris,
		Experiment{Name: "mt0", Params: Params{Calls: 20_000, Warmup: 0.5, Depth: 10, MethodTime: 0, Runs: 2, Goroutines: 1, ClockPairs: 200_000}},
	)
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
