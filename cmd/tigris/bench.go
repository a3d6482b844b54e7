package main

// tigris bench: the command, its flags and what both workloads share; the
// MooBench workload is bench_moobench.go, the PetClinic evaluation
// bench_petclinic.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench"
)

const benchHelp = `bench measures what tigris costs per monitored call with MooBench (van Hoorn,
Waller et al.), the benchmark behind Kieker's overhead figures, and compares it
in the same run with an OpenTelemetry Go SDK span and a Go execution tracer
region around the same method.

It runs in a clone of the tigris repository (found upward from the current
directory, or --root): it builds examples/moobench plainly, with this tigris
executable and with -tags exectrace, and examples/moobench-otel (a module of
its own, so the first build downloads the OpenTelemetry SDK), then runs every
configuration in fresh processes, interleaved:

  baseline         no instrumentation                              T
  deactivated      probes compiled in, off                         T+I
  coarse           coarse statistics, every call timed (phase 1's  T+I+C
                   budget off: with it, phase 1 would switch the
                   method's probe off)
  fine-null        fine records, discarded                         T+I+C
  fine-async       fine records, async writer (the defaults: lossless) T+I+C+W
  fine-async-drop  the same with writer.on-full: drop              T+I+C+W
  fine-sync        fine records, sync writer to a file             T+I+C+W
  otel-lossless    OpenTelemetry span, blocking batch processor,
                   every span exported to a file (the peer the targets name)
  otel             OpenTelemetry span, the SDK's default batch
                   processor, which drops when its queue is full
  exectrace        runtime/trace user region per call, the execution
                   tracer writing to a file

monitoredMethod recurses depth times and busy-waits the method time once at the
deepest level; a benchmark goroutine times every top-level call. Each
experiment runs with one method time: 0 is the upper bound of the overhead
(stress), 500µs the lower bound. A series at method time 0 runs the writers
with 2 and 8 benchmark goroutines: throughput, drops and the writer's cost per
record as the producers multiply.

Plans (the thesis' defaults are 10 runs × 2,000,000 calls, warm-up 0.5, depth 10):
  --tiny    2 runs × 20,000 calls, method time 0, and the series with 2
            goroutines: a smoke test (seconds)
  --quick   5 runs × 300,000 calls of 0, 3 × 1,000 calls of 500µs and 3 runs
            of the series with 25,000 calls per goroutine (the default; about
            two minutes on a 2-core machine, a cold tigris build included)
  --full    10 runs × 2,000,000 calls of 0, 10 runs × 10,000 calls of 500µs
            (the thesis' 2,000,000 calls of 500µs would take 1,000 s per run,
            22 hours for all configurations), 5 runs of the series with
            500,000 calls per goroutine. About 25 minutes. For the literal
            plan add --calls 2000000 (all experiments) or run --method-time
            500us --calls 2000000 on its own.
An exported OpenTelemetry span is a kilobyte of JSON and costs tens of µs at
the mean under stress: otel-lossless makes at most 10,000 (quick) or 50,000
(full) calls per run, otel at most 100,000 in the quick plan.
--calls, --runs, --depth, --goroutines and --warmup override every experiment's
value (--goroutines and --method-time drop the series); --method-time replaces
the experiments by one per listed method time.

Progress goes to standard error (each run's median, the clock pair, records
lost, elapsed time and an estimate of the time left), the results table to
standard output, and everything to --out (default
moobench-results/<plan>-<time>): raw/ (the binary timings of every run),
logs/, results.json (to summarize again with --from), summary.json, table.txt,
chart-<experiment>.svg (stacked portions per configuration) and raw.csv.gz
(every measurement). Per configuration the table gives the mean with its 95 %
confidence interval, median, quartiles, minimum and maximum per top-level call;
per monitored call the portions I, C and W, each as a multiple of the cost of
two monotonic clock reads measured by the same processes, and how many times
cheaper every overhead is than each peer's; the records or spans written and
lost, throughput, CPU time and allocations; the goroutine series; Kieker's
published figures for scale; and the comparison with the performance targets
(docs/performance.md). Run it on an idle machine: the table warns when the
load average exceeded the number of CPUs.`

func newBenchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench [--quick | --full | --tiny] [flags]",
		Short: "Measure the overhead per monitored call with MooBench, against OpenTelemetry and the execution tracer",
		Long:  benchHelp + evalHelp + realcodeHelp,
		Example: `  go run ./cmd/tigris bench                       # the quick plan
  tigris bench --full --out docs-run
  tigris bench --tiny --only fine-async,otel-lossless
  tigris bench --method-time 0,100us --calls 500000 --runs 5
  tigris bench --from moobench-results/quick-20250101-120000
  tigris bench --workload petclinic --full --out petclinic-results/run1
  tigris bench --workload realcode --tiny
  tigris bench --workload realcode --modules fastjson,toml --runs 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.changed = cmd.Flags().Changed
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			// Interrupting stops the current run; what ran is kept (see run).
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
			defer stop()
			if err := o.run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr()); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			return nil
		},
	}
	o.register(cmd)
	return cmd
}

// benchOptions are the bench command's flags.
type benchOptions struct {
	quick, full, tiny bool
	calls, runs       int
	depth, gor        int
	warmup            float64
	methodTimes       []time.Duration
	only              []string
	pause             time.Duration
	out, from, root   string
	rawCSV, keep      bool
	workload          string
	eval              evalOptions     // --workload petclinic (bench_petclinic.go)
	real              realcodeOptions // --workload realcode (bench_realcode.go)

	changed func(flag string) bool // the command line's: was the flag given
}

// planFlags are the flags that shape a plan, which --from does not take.
var planFlags = []string{"quick", "full", "tiny", "calls", "runs", "depth", "goroutines", "warmup",
	"method-time", "only", "pause", "root", "keep-scratch", "out"}

func (o *benchOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.quick, "quick", false, "the quick plan (the default): about two minutes")
	f.BoolVar(&o.full, "full", false, "the full plan: 10 runs × 2,000,000 calls; about 25 minutes")
	f.BoolVar(&o.tiny, "tiny", false, "a smoke test: 2 runs × 20,000 calls")
	f.IntVar(&o.calls, "calls", 0, "top-level calls per run and goroutine (every experiment)")
	f.IntVar(&o.runs, "runs", 0, "runs (fresh processes) per configuration (every experiment)")
	f.IntVar(&o.depth, "depth", 0, "recursion depth: monitored calls per top-level call (every experiment)")
	f.IntVar(&o.gor, "goroutines", 0, "benchmark goroutines per process (every experiment)")
	f.Float64Var(&o.warmup, "warmup", 0, "share of every run's calls discarded as warm-up, in (0, 1) (every experiment)")
	f.DurationSliceVar(&o.methodTimes, "method-time", nil, "run one experiment per method time, e.g. 0,500us")
	f.StringSliceVar(&o.only, "only", nil, "run only these configurations (and those they are measured over)")
	f.DurationVar(&o.pause, "pause", 0, "idle time before every run, to let the machine settle")
	f.StringVar(&o.out, "out", "", "results directory (default moobench-results/<plan>-<time>)")
	f.StringVar(&o.from, "from", "", "summarize the results in this directory again instead of running")
	f.StringVar(&o.root, "root", "", "the tigris repository (default: found upward from the current directory)")
	f.BoolVar(&o.rawCSV, "raw-csv", true, "write raw.csv.gz with every measurement (with --from: only when given)")
	f.BoolVar(&o.keep, "keep-scratch", false, "keep every run's trace and span files under the results directory")
	o.registerWorkload(cmd)
	o.registerRealcode(cmd)
}

// planName is the plan --quick, --full or --tiny names, "quick" by default.
func (o *benchOptions) planName() (string, error) {
	var names []string
	for _, f := range []struct {
		set  bool
		name string
	}{{o.quick, "quick"}, {o.full, "full"}, {o.tiny, "tiny"}} {
		if f.set {
			names = append(names, f.name)
		}
	}
	switch len(names) {
	case 0:
		return "quick", nil
	case 1:
		return names[0], nil
	}
	return "", errors.New("--quick, --full and --tiny exclude each other")
}

// repoAndSelf returns the tigris repository (repoRoot) and this executable,
// which builds the instrumented configurations, with symbolic links resolved.
func (o *benchOptions) repoAndSelf() (root, self string, err error) {
	if root, err = o.repoRoot(); err != nil {
		return "", "", err
	}
	if self, err = selfExecutable(); err != nil {
		return "", "", err
	}
	return root, self, nil
}

// selfExecutable is this executable, with symbolic links resolved.
func selfExecutable() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locating the tigris executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	return self, nil
}

// reportRun writes the report of a workload's run, which may have stopped
// early: report's error joins the run's, and an interrupt says that the
// report holds the runs done.
func reportRun(runErr error, report func() error) error {
	if err := report(); err != nil {
		return errors.Join(runErr, err)
	}
	if errors.Is(runErr, context.Canceled) {
		return errors.New("interrupted; the report holds the runs done")
	}
	return runErr
}

// outDir is the results directory: --out, else <kind>-results/<plan>-<time>.
func (o *benchOptions) outDir(kind, plan string) string {
	if o.out != "" {
		return o.out
	}
	return filepath.Join(kind+"-results", plan+"-"+time.Now().Format("20060102-150405"))
}

// repoRoot is the tigris repository: --root, or found upward from the current
// directory.
func (o *benchOptions) repoRoot() (string, error) {
	if o.root != "" {
		root, err := bench.FindRoot(o.root)
		if err != nil {
			return "", fmt.Errorf("--root: %w", err)
		}
		return root, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := bench.FindRoot(wd)
	if err != nil {
		return "", fmt.Errorf("run it in a clone of the tigris repository, or name one with --root: %w", err)
	}
	return root, nil
}
