package main

// tigris bench (the MooBench workload): the flags become a bench.Plan, a
// bench.Driver runs it, bench.Report writes what it measured.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tigrisgo/tigris/bench"
)

func (o *benchOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	if done, err := o.runWorkload(ctx, stdout, stderr); done {
		return err
	}
	if o.from != "" {
		return o.summarizeAgain(stdout, stderr)
	}
	root, self, err := o.repoAndSelf()
	if err != nil {
		return err
	}
	p, err := o.plan(root, bench.TigrisBuild(self, root))
	if err != nil {
		return err
	}
	out := o.outDir("moobench", p.Name)
	bench.Describe(stderr, p, out)
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

// plan builds the plan the flags ask for, with tigris building the tigris
// configurations, and validates it.
func (o *benchOptions) plan(root string, tigris bench.BuildFunc) (bench.Plan, error) {
	var p bench.Plan
	name, err := o.planName()
	if err != nil {
		return p, err
	}
	switch name {
	case "full":
		p = bench.FullPlan(root, tigris)
	case "tiny":
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
