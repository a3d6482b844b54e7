package main

// tigris bench --workload petclinic: the flags of the Tigris paper's
// evaluation (Mertz & Nunes, JSS 2021, §6.2.1, Fig. 4) on the example service;
// package evaluation runs it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench/evaluation"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Workloads of tigris bench.
const (
	workloadMooBench  = "moobench"
	workloadPetclinic = evaluation.Workload
)

const evalHelp = `

--workload petclinic measures instead what the Tigris paper's evaluation
measured (Mertz & Nunes, JSS 2021, section 6.2.1, Fig. 4) on a web service
under load, examples/petclinic here: the service's CPU time per request and
its throughput, in fresh processes and interleaved repetitions of these
configurations, each a build of one scope:

  scope narrow      the example's tigris.yaml: service and repository layers
  scope module      every function of the service's module
  scope deps        the module, the SQL driver, database/sql and the router
                    (net/http's ServeMux), by execution pointcuts (std: true)

  none              go build: no monitoring
  phase1            module, every probe coarse, no analysis (phase 1 only)
  full              module, every probe fine, sampling 100 %, async writer
  off               module, every probe off
  query             probes off but one query (docs/queries.md): the slow calls of
                    one repository method, threshold pushed down to its probe
  fine-one          probes off but that method fine, sampling 100 %
  restricted-<s>    two-phase: coarse, and every --interval the analyzer traces
                    what --restricted selects in fine mode at sampling <s> %
  expanded-<s>      the same with --expanded
                    (s = --sampling: 100, 50, 25, 10, 5 and 1 in --full)
  narrow-phase1, narrow-full, deps-phase1, deps-full, deps-expanded-10
                    the same on the other scopes
  truth, truth-browse, truth-maintenance
                    every call of the module traced with its result's size
                    under the steady load (every round, with the round's
                    users), the browsing users alone and the front desk alone
                    (once); tigris analyze's selection from each one-second
                    window of the trace is the ground truth of each filter
  shift-restricted, shift-expanded
                    once: two-phase at 10 %, the load switching from browsing
                    to the front desk after 4 analysis intervals

With two CPUs or more the service runs on one CPU and the load generator
(examples/petclinic/cmd/petclinic-load, the paper's workload) in a process of
its own on another (sched_setaffinity): 5 to 20 users following three
navigation patterns, without think time. Every run loads the service for
--warmup-time (for two-phase, until at least one analysis cycle has happened),
then measures the next --duration: the CPU time of the service's threads over
the requests served, and the throughput. The table gives medians over the runs
with 95 % bootstrap intervals, the CPU per request against no monitoring (vs
none: the two medians, each resampled; vs none, paired: the median over the
rounds of each run against no monitoring's run of the same round, which ran
the same load, the rounds resampled, so that a slow round does not widen it),
the extra CPU the per-call costs of docs/performance.md predict, and the
precision and recall of the live selections against the ground truth: each
cycle against the truth window where it looked.

Plans (per configuration):
  --tiny    1 run of 1.5 s after 2 s, sampling 100 and 1 %: a smoke test
  --quick   3 runs of 1.5 s after 2 s, analysis every 1 s, sampling 100, 10
            and 1 % (the default; about six minutes, builds included)
  --full    12 runs of 3 s after 3 s, analysis every 1 s, all six rates: the
            evaluation, about 35 minutes
--runs, --duration, --warmup-time, --interval, --sampling, --restricted,
--expanded, --seed and --only (configuration names) override them.

Results go to --out (default petclinic-results/<plan>-<time>): summary.json
(plan, machine, every run, every configuration's medians with their
intervals), table.txt (also on standard output), cpu.svg (the paper's Fig. 4
with CPU per request) and throughput.svg.`

// evalOptions are the flags only --workload petclinic takes.
type evalOptions struct {
	duration, warmup, interval time.Duration
	restricted, expanded       string
	sampling                   []float64
	seed                       uint64
}

// evalFlags are those flags' names; mooBenchOnly the bench flags petclinic
// does not take.
var (
	evalFlags    = []string{"duration", "warmup-time", "interval", "restricted", "expanded", "sampling", "seed"}
	mooBenchOnly = []string{"calls", "depth", "goroutines", "warmup", "method-time", "blocking", "raw-csv"}
)

// registerWorkload adds --workload and the flags of --workload petclinic.
func (o *benchOptions) registerWorkload(cmd *cobra.Command) {
	f := cmd.Flags()
	e := &o.eval
	f.StringVar(&o.workload, "workload", workloadMooBench, "what to measure: moobench (the overhead per call), petclinic (service throughput, the paper's Fig. 4) or realcode (real modules' own benchmarks)")
	f.DurationVar(&e.duration, "duration", 0, "petclinic: measured load per run")
	f.DurationVar(&e.warmup, "warmup-time", 0, "petclinic: load before the measured window of every run")
	f.DurationVar(&e.interval, "interval", 0, "petclinic: analysis interval of the two-phase configurations")
	f.StringVar(&e.restricted, "restricted", evaluation.DefaultRestricted, "petclinic: the restricted TigrisDSL filter")
	f.StringVar(&e.expanded, "expanded", evaluation.DefaultExpanded, "petclinic: the expanded TigrisDSL filter")
	f.Float64SliceVar(&e.sampling, "sampling", evaluation.DefaultSampling, "petclinic: sampling rates of the two-phase configurations, in percent")
	f.Uint64Var(&e.seed, "seed", 1, "petclinic: seed of the simulated users (run r uses seed + 1000·r)")
}

// runWorkload runs the petclinic evaluation when --workload asks for it and
// reports done; for MooBench it only checks that no petclinic flag was given.
func (o *benchOptions) runWorkload(ctx context.Context, stdout, stderr io.Writer) (done bool, err error) {
	given := func(names []string) []string {
		var out []string
		for _, n := range names {
			if o.changed != nil && o.changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch o.workload {
	case workloadMooBench:
		if g := given(evalFlags); len(g) > 0 {
			return true, fmt.Errorf("%s only apply to --workload petclinic", strings.Join(g, ", "))
		}
		if g := given(realcodeFlags); len(g) > 0 {
			return true, fmt.Errorf("%s only apply to --workload realcode", strings.Join(g, ", "))
		}
		return false, nil
	case workloadPetclinic:
		if g := given(slices.Concat(mooBenchOnly, realcodeFlags)); len(g) > 0 {
			return true, fmt.Errorf("--workload petclinic does not take %s", strings.Join(g, ", "))
		}
		if o.from != "" {
			if g := given(append(slices.Clone(planFlags), evalFlags...)); len(g) > 0 {
				return true, fmt.Errorf("--from summarizes earlier results; it does not take %s", strings.Join(g, ", "))
			}
			sum, err := evaluation.ReadSummary(o.from)
			if err != nil {
				return true, err
			}
			return true, writeEvalReport(stdout, stderr, o.from, sum)
		}
		return true, o.runPetclinic(ctx, stdout, stderr)
	case workloadRealcode:
		return true, o.runRealcode(ctx, stdout, stderr, given)
	}
	return true, fmt.Errorf("--workload %q: want %s, %s or %s", o.workload, workloadMooBench, workloadPetclinic, workloadRealcode)
}

// evalPlanFor builds the plan the flags ask for and validates it.
func (o *benchOptions) evalPlanFor() (evaluation.Plan, error) {
	var p evaluation.Plan
	name, err := o.planName()
	if err != nil {
		return p, err
	}
	switch name {
	case "tiny":
		p = evaluation.TinyPlan()
	case "full":
		p = evaluation.FullPlan()
	default:
		p = evaluation.QuickPlan()
	}
	if o.runs < 0 || o.eval.duration < 0 || o.eval.warmup < 0 || o.eval.interval < 0 || o.pause < 0 {
		return p, errors.New("--runs, --duration, --warmup-time, --interval and --pause must not be negative")
	}
	if o.runs > 0 {
		p.Runs = o.runs
	}
	for _, d := range []struct {
		flag time.Duration
		dst  *settings.Duration
	}{{o.eval.duration, &p.Duration}, {o.eval.warmup, &p.Warmup}, {o.eval.interval, &p.Interval}} {
		if d.flag > 0 {
			*d.dst = settings.Duration(d.flag)
		}
	}
	p.Pause = settings.Duration(o.pause)
	p.Seed = o.eval.seed
	if o.changed != nil && o.changed("sampling") {
		p.Sampling = slices.Clone(o.eval.sampling)
	}
	seen := map[float64]bool{}
	for _, s := range p.Sampling {
		if !(s > 0 && s <= 100) {
			return p, fmt.Errorf("--sampling %v: want percentages in (0, 100]", s)
		}
		if seen[s] {
			return p, fmt.Errorf("--sampling %v: duplicated", s)
		}
		seen[s] = true
	}
	p.Restricted, p.Expanded = strings.TrimSpace(o.eval.restricted), strings.TrimSpace(o.eval.expanded)
	for _, f := range []struct{ flag, text string }{{"--restricted", p.Restricted}, {"--expanded", p.Expanded}} {
		if err := evaluation.CheckFilter(f.text); err != nil {
			return p, fmt.Errorf("%s %q: %w", f.flag, f.text, err)
		}
	}
	p.Configs = evaluation.Configs(p)
	if len(o.only) > 0 {
		if p, err = p.Only(o.only...); err != nil {
			return p, fmt.Errorf("--only: %w", err)
		}
	}
	return p, p.Validate()
}

// runPetclinic runs the evaluation the flags ask for and writes its report,
// also when it stopped early.
func (o *benchOptions) runPetclinic(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := o.evalPlanFor()
	if err != nil {
		return err
	}
	root, self, err := o.repoAndSelf()
	if err != nil {
		return err
	}
	out := o.outDir("petclinic", p.Name)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	d := &evaluation.Driver{Root: root, Tigris: self, Progress: stderr}
	if o.keep {
		d.Scratch = filepath.Join(out, "scratch")
	}
	evaluation.Describe(stderr, p, out)
	sum, runErr := d.Run(ctx, p)
	if sum == nil {
		return runErr
	}
	return reportRun(runErr, func() error { return writeEvalReport(stdout, stderr, out, sum) })
}

// writeEvalReport writes the report into dir and the table to stdout.
func writeEvalReport(stdout, stderr io.Writer, dir string, sum *evaluation.Summary) error {
	if err := evaluation.Report(dir, sum); err != nil {
		return err
	}
	if err := evaluation.WriteTable(stdout, sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: report in %s (table.txt, summary.json, cpu.svg, throughput.svg)\n", dir)
	return nil
}
