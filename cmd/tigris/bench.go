package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench"
)

const benchHelp = `bench measures what tigris costs per monitored call with MooBench (van Hoorn,
Waller et al.), the benchmark behind Kieker's overhead figures, and compares it
with an OpenTelemetry Go SDK span around the same method.

It runs in a clone of the tigris repository (found upward from the current
directory, or --root): it builds examples/moobench plainly and with this tigris
executable, and examples/moobench-otel (a module of its own, so the first build
downloads the OpenTelemetry SDK), then runs every configuration in fresh
processes, interleaved:

  baseline      no instrumentation                        T
  deactivated   probes compiled in, off                   T+I
  coarse        coarse statistics                         T+I+C
  fine-null     fine records, discarded                   T+I+C
  fine-async    fine records, async writer to a file      T+I+C+W
  fine-sync     fine records, sync writer to a file       T+I+C+W
  otel          OpenTelemetry span, batch processor, file (the peer)
  (--blocking adds fine-async-block and otel-blocking: writers that never drop)

monitoredMethod recurses depth times and busy-waits the method time once at the
deepest level; a benchmark goroutine times every top-level call. Each
experiment runs with one method time: 0 is the upper bound of the overhead
(stress), 500µs the lower bound.

Plans (the thesis' defaults are 10 runs × 2,000,000 calls, warm-up 0.5, depth 10):
  --tiny    2 runs × 20,000 calls, method time 0: a smoke test (seconds)
  --quick   5 runs × 300,000 calls of 0 and 5 × 1,000 calls of 500µs (the
            default; about two minutes on a 2-core machine, a cold tigris
            build included)
  --full    10 runs × 2,000,000 calls of 0, and 10 runs × 20,000 calls of
            500µs: the thesis' 2,000,000 calls of 500µs would take 1,000 s per
            run, 19.4 hours for all configurations. About 25 minutes. For the
            literal plan add --calls 2000000 (all experiments) or run
            --method-time 500us --calls 2000000 on its own.
--calls, --runs, --depth, --goroutines and --warmup override every experiment's
value; --method-time replaces the experiments by one per listed method time.

Progress goes to standard error (each run's median, the clock pair, records
lost, elapsed time and an estimate of the time left), the results table to
standard output, and everything to --out (default
moobench-results/<plan>-<time>): raw/ (the binary timings of every run),
logs/, results.json (to summarize again with --from), summary.json, table.txt,
chart-<experiment>.svg (stacked portions per configuration) and raw.csv.gz
(every measurement). Per configuration the table gives the mean with its 95 %
confidence interval, median, quartiles, minimum and maximum per top-level call;
per monitored call the portions I, C and W, each as a multiple of the cost of
two monotonic clock reads measured by the same processes, and every overhead as
a share of the peer's; the records written and lost; allocations; and the
comparison with DESIGN.md's targets. Run it on an idle machine: the table warns
when the load average exceeded the number of CPUs.`

func newBenchCmd() *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench [--quick | --full | --tiny] [flags]",
		Short: "Measure the overhead per monitored call with MooBench, against OpenTelemetry",
		Long:  benchHelp + evalHelp,
		Example: `  go run ./cmd/tigris bench                       # the quick plan
  tigris bench --full --out docs-run
  tigris bench --tiny --only fine-async,otel
  tigris bench --method-time 0,100us --calls 500000 --runs 5
  tigris bench --from moobench-results/quick-20250101-120000
  tigris bench --workload petclinic --full --out petclinic-results/run1`,
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
	blocking          bool
	pause             time.Duration
	out, from, root   string
	rawCSV, keep      bool
	workload          string
	eval              evalOptions // --workload petclinic (evaluate.go)

	changed func(flag string) bool // the command line's: was the flag given
}

// planFlags are the flags that shape a plan, which --from does not take.
var planFlags = []string{"quick", "full", "tiny", "calls", "runs", "depth", "goroutines", "warmup",
	"method-time", "only", "blocking", "pause", "root", "keep-scratch", "out"}

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
	f.BoolVar(&o.blocking, "blocking", false, "add fine-async-block and otel-blocking, writers that wait instead of dropping")
	f.DurationVar(&o.pause, "pause", 0, "idle time before every run, to let the machine settle")
	f.StringVar(&o.out, "out", "", "results directory (default moobench-results/<plan>-<time>)")
	f.StringVar(&o.from, "from", "", "summarize the results in this directory again instead of running")
	f.StringVar(&o.root, "root", "", "the tigris repository (default: found upward from the current directory)")
	f.BoolVar(&o.rawCSV, "raw-csv", true, "write raw.csv.gz with every measurement (with --from: only when given)")
	f.BoolVar(&o.keep, "keep-scratch", false, "keep every run's trace and span files under the results directory")
	o.registerWorkload(cmd)
}

func (o *benchOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if done, err := o.runWorkload(ctx, stdout, stderr); done {
		return err
	}
	if o.from != "" {
		return o.summarizeAgain(stdout, stderr)
	}
	root, err := o.repoRoot()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating the tigris executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	p, err := o.plan(root, bench.TigrisBuild(self, root))
	if err != nil {
		return err
	}
	out := o.out
	if out == "" {
		out = filepath.Join("moobench-results", p.Name+"-"+time.Now().Format("20060102-150405"))
	}
	describePlan(stderr, p, out)
	d := &bench.Driver{Dir: out, Progress: stderr, KeepScratch: o.keep}
	res, err := d.Run(ctx, p)
	if err != nil {
		if res != nil && len(res.Runs) > 0 {
			// Keep what ran: Report writes results.json first, so --from can
			// summarize it even when this partial report fails.
			bench.Report(out, res, false)
			if _, serr := os.Stat(filepath.Join(out, "results.json")); serr == nil {
				fmt.Fprintf(stderr, "bench: the %d run(s) done are in %s; tigris bench --from %s summarizes them\n", len(res.Runs), out, out)
			}
		}
		if errors.Is(err, context.Canceled) {
			return errors.New("interrupted")
		}
		return err
	}
	return writeBenchReport(stdout, stderr, out, res, o.rawCSV)
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

// plan builds the plan the flags ask for, with tigris building the tigris
// configurations, and validates it.
func (o *benchOptions) plan(root string, tigris bench.BuildFunc) (bench.Plan, error) {
	var p bench.Plan
	n := 0
	for _, set := range []bool{o.quick, o.full, o.tiny} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return p, errors.New("--quick, --full and --tiny exclude each other")
	case o.full:
		p = bench.FullPlan(root, tigris)
	case o.tiny:
		p = bench.TinyPlan(root, tigris)
	default:
		p = bench.QuickPlan(root, tigris)
	}
	if o.calls < 0 || o.runs < 0 || o.depth < 0 || o.gor < 0 || o.pause < 0 {
		return p, errors.New("--calls, --runs, --depth, --goroutines and --pause must not be negative")
	}
	if o.warmup < 0 || o.warmup >= 1 {
		return p, fmt.Errorf("--warmup %v: want a share in (0, 1)", o.warmup)
	}
	for _, mt := range o.methodTimes {
		if mt < 0 {
			return p, fmt.Errorf("--method-time %v: must not be negative", mt)
		}
	}
	p = p.With(bench.Overrides{Calls: o.calls, Runs: o.runs, Depth: o.depth, Goroutines: o.gor,
		Warmup: o.warmup, MethodTimes: o.methodTimes})
	if o.blocking {
		p = bench.WithBlocking(p)
	}
	if len(o.only) > 0 {
		var err error
		if p, err = p.Only(o.only...); err != nil {
			return p, fmt.Errorf("--only: %w", err)
		}
	}
	p.Pause = o.pause
	return p, p.Validate()
}

// summarizeAgain is --from: the report of earlier results, written again with
// this version's analysis.
func (o *benchOptions) summarizeAgain(stdout, stderr io.Writer) error {
	var given []string
	for _, f := range planFlags {
		if o.changed != nil && o.changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) > 0 {
		return fmt.Errorf("--from summarizes earlier results; it does not take %s", strings.Join(given, ", "))
	}
	res, err := bench.ReadResults(filepath.Join(o.from, "results.json"))
	if err != nil {
		return err
	}
	// Writing every measurement again takes minutes for the full plan.
	csv := o.changed != nil && o.changed("raw-csv") && o.rawCSV
	return writeBenchReport(stdout, stderr, o.from, res, csv)
}

// writeBenchReport writes the report into dir and the table to stdout.
func writeBenchReport(stdout, stderr io.Writer, dir string, res *bench.Results, rawCSV bool) error {
	s, err := bench.Report(dir, res, rawCSV)
	if err != nil {
		return err
	}
	if err := bench.WriteTable(stdout, s); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: report in %s (table.txt, summary.json, chart-*.svg", dir)
	if rawCSV {
		fmt.Fprint(stderr, ", raw.csv.gz")
	}
	fmt.Fprintln(stderr, ")")
	return nil
}

// describePlan says on stderr what is about to happen and how long it may take.
func describePlan(w io.Writer, p bench.Plan, out string) {
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name)
	}
	fmt.Fprintf(w, "bench: plan %s, configurations %s; results in %s\n", p.Name, strings.Join(names, ", "), out)
	for _, e := range p.Experiments {
		q := e.Params
		fmt.Fprintf(w, "bench: experiment %s: %d run(s) × %d call(s) × %d goroutine(s), depth %d, method time %v, warm-up %.0f%%\n",
			e.Name, q.Runs, q.Calls, q.Goroutines, q.Depth, q.MethodTime, 100*q.Warmup)
	}
	// 100 ns per monitored call is about a tigris fine record; the peer costs
	// more, which the progress lines' estimates take into account once it ran.
	fmt.Fprintf(w, "bench: the runs take at least %v, plus the builds\n", p.Estimate(100*time.Nanosecond).Round(time.Second))
	if load := bench.LoadAverage(); load > float64(runtime.NumCPU()) {
		fmt.Fprintf(w, "bench: warning: load average %.1f on %d CPU(s): the machine is busy, expect noisy means (medians hold up better)\n",
			load, runtime.NumCPU())
	}
}
