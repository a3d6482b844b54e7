package main

// tigris bench --workload realcode: the flags of the real-code benchmark;
// package realcode runs it.

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

	"github.com/tigrisgo/tigris/bench/realcode"
)

const workloadRealcode = realcode.Workload

const realcodeHelp = `

--workload realcode measures what probes cost in real code: the own benchmarks
(go test -bench) of real modules, each pinned and fetched through the module
proxy (go mod download), copied into a work directory where it is its own main
module, and "tigris init" run there (tigris.yaml instrumenting every function
of the module; go.mod requiring the runtime, through a replace when this tigris
is built from a checkout). Test binaries built from the same copy:

  plain       go test -c: no tigris
  floor       every probe compiled as a load, a branch and a cold call of an
              empty function (monitor.floor: true), run with probes off
  off         the config tigris init writes, TIGRIS_MODE=off
  default     that config as written (coarse)
  floor-all   every function probed (monitor.inlinable: probe and
              monitor.small: probe), each probe the floor, TIGRIS_MODE=off
  off-all     every function probed, TIGRIS_MODE=off
  coarse-all  the same, TIGRIS_MODE=coarse
  fine-all    the same, TIGRIS_MODE=fine: a record per call to a trace file in
              a scratch directory

Modules: fastjson (JSON parser), gjson (JSON queries), toml (parser and
encoder), btree (generic container), httprouter (router), zerolog (logger) and
lz4 (compressor), 2 to 10 benchmarks each that time the module's own code.
Rounds run every variant of every module once, in an order that rotates from
round to round, each run with -test.run=^$ -test.count=1 -test.cpu=1 and a
short -test.benchtime. Per round and benchmark, a variant's time per operation
is divided by the plain build's of that round; per module and variant the
table gives the geometric mean over its benchmarks with the 95 % confidence
interval across rounds (Student's t on the rounds' log ratios), and the
geometric mean over all modules.

Before the rounds, each module's benchmarks run once more, plain, with
-test.cpuprofile: the table's second part gives, per module, the share of its
CPU time in the functions the default config probes (inclusive, pprof's cum,
and exclusive, pprof's flat), the share with a probed function on the stack
(what the probes' statistics measure), the own time left in functions the
compiler inlines or that are too small for a probe, and off-all's overhead
over floor-all's.

Plans:
  --tiny    httprouter and fastjson, 2 and 2 benchmarks, 2 rounds of 10ms runs,
            profiles of 200ms a benchmark (CI's smoke test; about two minutes,
            builds included)
  --quick   every module, 5 rounds of 100ms runs (fine-all 50ms), profiles of
            500ms (the default; about fifteen minutes on a 2-core machine)
  --full    every module, 10 rounds of 300ms runs (fine-all 100ms), profiles
            of 2s
--runs (rounds), --benchtime, --modules and --only (variants) override them.

Progress goes to standard error, the table to standard output, and to --out
(default realcode-results/<plan>-<time>): results.json (every run's time per
operation per benchmark, the probes per build, the summary; --from summarizes
it again), table.txt (the table, the notes and every benchmark's ratios) and
table.md (the table in Markdown). --keep-scratch keeps the copies and binaries
under --out/scratch.`

// realcodeFlags are the flags only --workload realcode takes.
var realcodeFlags = []string{"modules", "benchtime"}

// realcodeOptions are those flags.
type realcodeOptions struct {
	modules   []string
	benchtime time.Duration
}

// registerRealcode adds the flags of --workload realcode.
func (o *benchOptions) registerRealcode(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVar(&o.real.modules, "modules", nil, "realcode: run only these modules (fastjson, gjson, toml, btree, httprouter, zerolog, lz4)")
	f.DurationVar(&o.real.benchtime, "benchtime", 0, "realcode: -test.benchtime of every run (fine-all: half of it)")
}

// runRealcode runs --workload realcode.
func (o *benchOptions) runRealcode(ctx context.Context, stdout, stderr io.Writer, given func([]string) []string) error {
	if g := given(append(slices.Clone(mooBenchOnly), evalFlags...)); len(g) > 0 {
		return fmt.Errorf("--workload realcode does not take %s", strings.Join(g, ", "))
	}
	if o.from != "" {
		if g := given(append(slices.Clone(planFlags), realcodeFlags...)); len(g) > 0 {
			return fmt.Errorf("--from summarizes earlier results; it does not take %s", strings.Join(g, ", "))
		}
		res, err := realcode.ReadResults(filepath.Join(o.from, "results.json"))
		if err != nil {
			return err
		}
		return writeRealcodeReport(stdout, stderr, o.from, res)
	}
	p, err := o.realcodePlan()
	if err != nil {
		return err
	}
	self, err := selfExecutable()
	if err != nil {
		return err
	}
	root, _ := o.repoRoot() // only for the commit in the report
	out := o.outDir("realcode", p.Name)
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	d := &realcode.Driver{Tigris: self, Root: root, Progress: stderr}
	if o.keep {
		d.Work = filepath.Join(out, "scratch")
	}
	realcode.Describe(stderr, p, out)
	res, runErr := d.Run(ctx, p)
	if res == nil {
		return runErr
	}
	return reportRun(runErr, func() error { return writeRealcodeReport(stdout, stderr, out, res) })
}

// realcodePlan builds the plan the flags ask for and validates it.
func (o *benchOptions) realcodePlan() (realcode.Plan, error) {
	name, err := o.planName()
	if err != nil {
		return realcode.Plan{}, err
	}
	p, err := realcode.PlanNamed(name)
	if err != nil {
		return p, err
	}
	if o.runs < 0 || o.real.benchtime < 0 || o.pause < 0 {
		return p, errors.New("--runs, --benchtime and --pause must not be negative")
	}
	if o.runs > 0 {
		p.Rounds = o.runs
	}
	if o.real.benchtime > 0 {
		p.BenchTime, p.FineBenchTime = o.real.benchtime, o.real.benchtime/2
	}
	p.Pause = o.pause
	if len(o.real.modules) > 0 {
		if p, err = p.OnlyModules(o.real.modules...); err != nil {
			return p, fmt.Errorf("--modules: %w", err)
		}
	}
	if len(o.only) > 0 {
		if p, err = p.OnlyVariants(o.only...); err != nil {
			return p, fmt.Errorf("--only: %w", err)
		}
	}
	return p, p.Validate()
}

// writeRealcodeReport writes the report into dir and the table to stdout.
func writeRealcodeReport(stdout, stderr io.Writer, dir string, res *realcode.Results) error {
	s, err := realcode.Report(dir, res)
	if err != nil {
		return err
	}
	realcode.WriteTable(stdout, res, s)
	fmt.Fprintf(stderr, "bench: report in %s (results.json, table.txt, table.md)\n", dir)
	return nil
}
