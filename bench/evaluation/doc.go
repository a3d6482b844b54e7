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
// the two TigrisDSL filters; [Configs] lists its configurations: the paper's
// Fig. 4 (none, a plain build; phase1, every probe coarse; full, every call
// traced; restricted-s and expanded-s, two-phase at sampling s) on the build
// that probes every function of the service's module, the same on the
// example's narrow selection and on one that adds the hot packages of its
// dependencies ([Scopes]), the ground truth of the filters (truth runs, one a
// round, whose complete fine trace the offline analyzer reads one analysis
// window at a time, as the live analyzer sees its statistics) and two-phase
// runs whose load switches navigation pattern in the middle (shift).
//
// [Driver.Run] builds the service plainly and once per scope with tigris,
// runs every configuration in fresh processes, interleaved, with the service
// on one CPU and the load generator (package loadgen, below this one, run as
// the example's petclinic-load command) in a process of its own on another,
// reads the service's CPU time over the measured window and the program's
// counters through its admin endpoint (package adminclient), and returns a
// [Summary]: every run, and per configuration the median CPU per request
// and throughput with 95 % bootstrap intervals, the CPU against no
// monitoring (the ratio of the medians, and the median of the ratios to no
// monitoring's run of the same round, which ran the same load:
// ConfigSummary.PairedRatio), what the per-call costs predict ([CostModel])
// and the live selections' precision, recall and stability against the
// ground truth ([Quality]: each cycle against the truth window where it
// looked).
// [Report] writes summary.json, table.txt, cpu.svg and throughput.svg;
// [ReadSummary] reads a summary.json back and summarizes it again.
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
