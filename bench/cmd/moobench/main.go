// Command moobench runs the MooBench plans of package bench and writes the
// report: raw data, results.json, summary.json, table.txt, chart-*.svg and
// raw.csv.gz under -out.
//
//	go run ./bench/cmd/moobench -plan quick                  # baseline + OpenTelemetry
//	go run ./bench/cmd/moobench -plan quick -tigris ./tigris # + the tigris configurations
//	go run ./bench/cmd/moobench -from moobench-results/quick # summarize again
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/bench"
)

func main() {
	var (
		planName = flag.String("plan", "quick", "plan: tiny, quick or full")
		out      = flag.String("out", "", "results directory (default moobench-results/<plan>-<time>)")
		tigris   = flag.String("tigris", "", "tigris executable; adds the tigris configurations built with `tigris go build`")
		only     = flag.String("only", "", "comma-separated configurations to run (those they are measured over are added)")
		runs     = flag.Int("runs", 0, "override every experiment's runs")
		calls    = flag.Int("calls", 0, "override every experiment's calls")
		pause    = flag.Duration("pause", 0, "idle time before every run")
		csv      = flag.Bool("csv", true, "write raw.csv.gz with every measurement")
		keep     = flag.Bool("keep-scratch", false, "keep every run's trace files")
		blocking = flag.Bool("otel-blocking", false, "add the otel-blocking configuration (a batch processor that never drops)")
		from     = flag.String("from", "", "summarize the results.json in this directory again instead of running")
	)
	flag.Parse()
	if err := run(*planName, *out, *tigris, *only, *runs, *calls, *pause, *csv, *keep, *blocking, *from); err != nil {
		fmt.Fprintln(os.Stderr, "moobench:", err)
		os.Exit(1)
	}
}

func run(planName, out, tigris, only string, runs, calls int, pause time.Duration, csv, keep, blocking bool, from string) error {
	if from != "" {
		res, err := bench.ReadResults(filepath.Join(from, "results.json"))
		if err != nil {
			return err
		}
		return report(from, res, csv)
	}
	root, err := bench.FindRoot(".")
	if err != nil {
		return err
	}
	var tb bench.BuildFunc
	if tigris != "" {
		exe, err := filepath.Abs(tigris)
		if err != nil {
			return err
		}
		tb = bench.TigrisBuild(exe, root)
	}
	var p bench.Plan
	switch planName {
	case "tiny":
		p = bench.TinyPlan(root, tb)
	case "quick":
		p = bench.QuickPlan(root, tb)
	case "full":
		p = bench.FullPlan(root, tb)
	default:
		return fmt.Errorf("unknown plan %q (want tiny, quick or full)", planName)
	}
	if blocking {
		p = bench.WithOTelBlocking(p)
	}
	if only != "" {
		if p, err = p.Only(strings.Split(only, ",")...); err != nil {
			return err
		}
	}
	for i := range p.Experiments {
		if runs > 0 {
			p.Experiments[i].Params.Runs = runs
		}
		if calls > 0 {
			p.Experiments[i].Params.Calls = calls
		}
	}
	p.Pause = pause
	if out == "" {
		out = filepath.Join("moobench-results", p.Name+"-"+time.Now().Format("20060102-150405"))
	}
	fmt.Fprintf(os.Stderr, "moobench: plan %s, %d configuration(s), results in %s; runs take about %v\n",
		p.Name, len(p.Variants), out, p.Estimate(100*time.Nanosecond).Round(time.Second))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d := &bench.Driver{Dir: out, Progress: os.Stderr, KeepScratch: keep}
	res, err := d.Run(ctx, p)
	if err != nil {
		if res != nil && len(res.Runs) > 0 {
			fmt.Fprintf(os.Stderr, "moobench: %d run(s) done before the failure are in %s\n", len(res.Runs), out)
		}
		return err
	}
	return report(out, res, csv)
}

func report(dir string, res *bench.Results, csv bool) error {
	s, err := bench.Report(dir, res, csv)
	if err != nil {
		return err
	}
	if err := bench.WriteTable(os.Stdout, s); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "moobench: report in %s\n", dir)
	return nil
}
