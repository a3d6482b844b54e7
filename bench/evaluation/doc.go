// Package evaluation runs the Tigris paper's evaluation on the bundled example
// service, examples/petclinic (Mertz & Nunes, JSS 2021, §6.2.1, figure 4),
// and the demo that tells the same story live. It is the petclinic workload
// of `tigris bench` (the MooBench workload is package bench, whose statistics
// and charts it shares) and the library of `tigris demo`; docs/evaluation.md
// describes the experiment and its results.
//
// # The evaluation
//
// A [Plan] ([TinyPlan], [QuickPlan], [FullPlan]) names the runs, their
// warm-up and measured window, the analysis interval, the sampling rates and
// the two TigrisDSL filters; [Configs] lists its configurations in the order
// of Fig. 4: none (a plain build), phase1 (every probe coarse), full (every
// call traced) and restricted-s and expanded-s (two-phase, at sampling s).
// [Driver.Run] builds the service plainly and with tigris, runs every
// configuration in fresh processes, interleaved, loads each with the paper's
// workload (package loadgen, below this one) on a loopback port, reads the
// program's counters through its admin endpoint (package adminclient), and
// returns a [Summary]: every run, and per configuration the mean throughput
// with its 95 % confidence interval and its ratio to no monitoring.
// [Report] writes summary.json, table.txt and throughput.svg; [ReadSummary]
// reads a summary.json back and summarizes it again.
//
//	p := evaluation.QuickPlan()
//	p.Configs = evaluation.Configs(p)
//	d := &evaluation.Driver{Root: root, Tigris: tigrisExe, Progress: os.Stderr}
//	sum, err := d.Run(ctx, p)
//	...
//	evaluation.Report(dir, sum)
//	evaluation.WriteTable(os.Stdout, sum)
//
// # The demo
//
// [Demo] builds the service with tigris, starts it with the analyzer on,
// loads it and prints each analysis cycle as it happens, then the phase-1
// statistics, the selections and what the trace writer wrote, and converts the
// trace for pprof and Perfetto.
//
// Both need a checkout of the tigris repository (the example's source) and a
// go command; the service always runs on loopback and is stopped whatever
// happens.
package evaluation
