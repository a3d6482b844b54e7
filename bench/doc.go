// Package bench drives MooBench, the micro-benchmark for monitoring overhead of
// van Hoorn, Waller et al. (J. Waller, Performance Benchmarking of Application
// Monitoring Frameworks, PhD thesis, Kiel University, 2014, ch. 6–8: "the
// thesis" below), for tigris and its peers (an OpenTelemetry span, a Go
// execution tracer region), and analyses the raw data it produces against
// tigris's performance targets (docs/performance.md
// lists them with the latest verdicts). The PetClinic evaluation, the other
// workload of `tigris bench`, is package bench/evaluation.
//
// # The experiment
//
// examples/moobench is the monitored application: a benchmark goroutine calls
// monitoredMethod(methodTime, depth), which recurses depth times and busy-waits
// methodTime once at the deepest level, and times every top-level call with two
// reads of runtime.nanotime into a preallocated array. One source is built in
// several ways and run in several configurations ([Variant]); each configuration
// adds one portion of overhead to the one it is measured over (its Over):
//
//	config            build and run                                  measures
//	baseline          go build                                       T
//	deactivated       tigris go build, TIGRIS_MODE=off               T+I
//	coarse            TIGRIS_MODE=coarse, TIGRIS_COARSE_BUDGET=0     T+I+C  (coarse statistics, every call timed)
//	fine-null         TIGRIS_MODE=fine, TIGRIS_WRITER=null           T+I+C  (fine record, discarded)
//	fine-async        TIGRIS_MODE=fine, TIGRIS_WRITER=async          T+I+C+W (the defaults: nothing lost)
//	fine-async-drop   the same with TIGRIS_ON_FULL=drop              T+I+C+W
//	fine-sync         TIGRIS_MODE=fine, TIGRIS_WRITER=sync           T+I+C+W
//	otel-lossless     examples/moobench-otel -otel-blocking          T+span, every span exported
//	otel              examples/moobench-otel                         T+span, the SDK's defaults
//	exectrace         go build -tags exectrace                       T+region, runtime/trace
//
// The peers stand on the baseline. otel-lossless, the OpenTelemetry Go SDK
// with a batch span processor that blocks when its queue is full, exports
// every span, as tigris's defaults write every record: it is the peer the
// targets name. otel is the SDK's default, whose processor drops spans when
// its queue is full (under stress most of them, so it measures mostly the
// cost of a dropped span). exectrace wraps every call in a runtime/trace user
// region while the execution tracer writes to a file, which never drops. A
// writer that drops looks cheaper than one that writes everything, so the
// driver counts what reached the output of every run: the records in the
// tigris trace file and the losses it reports ([Variant.Trace],
// [TraceCount]), and the spans the peer's exporter received (the line it
// prints at exit). otel-lossless writes a kilobyte of JSON per span, so the
// plans cap its calls ([Variant.Calls]).
//
// An experiment may run only some configurations ([Experiment.Configs]): the
// 500 µs experiment leaves out those that drop nothing there, and the
// goroutine series ([Experiment.Scaling], [Scaling]) runs the writers with 2
// and 8 benchmark goroutines, for throughput, drops and the CPU time a record
// costs as producers multiply (the driver takes each process' user and
// system time).
//
// Every top-level call makes depth monitored calls, so a portion per monitored
// call is the difference of two configurations divided by depth. Each portion is
// also given as a multiple of the cost of two monotonic clock reads measured by
// the same processes (the yardstick of the performance targets), and each
// configuration's total overhead as a ratio to every peer's (of the means and
// of the medians). Kieker's published figures are reported alongside. Each process also counts the heap allocations made during its
// benchmark loop, reported per monitored call. [ExperimentSummary.Targets]
// holds the verdicts on the performance targets.
//
// # Statistics
//
// As in the thesis (sections 3.4 and 8.4, R13), statistics are computed from the
// raw data over all measurements of all runs of a configuration after the
// warm-up share of every run (and every benchmark goroutine) is discarded: the
// mean with its 95 % confidence interval (z = 1.96 for n ≥ 30, Student's t below),
// the median, the quartiles as medians of the lower and upper half (the middle
// value excluded when n is odd), the minimum and the maximum. The per-run means
// are kept as well, to spot a run that went wrong. Means, deviations and
// intervals come from package internal/moments, which the evaluation and tigris
// analyze share.
//
// # Driving
//
// A [Plan] names the binaries to build, the configurations to run and the
// experiments (parameter sets). [Driver.Run] builds every binary once into a
// temporary directory, runs every configuration Runs times in fresh processes,
// interleaved (run 1 of every configuration, then run 2, ...), keeps the raw data
// files under its directory and returns [Results]. Its progress lines name the
// configuration and run, the run's median and clock pair, the records lost, the
// time elapsed and an estimate of the time left. How a binary is built is a
// [BuildFunc]: [GoBuild] builds a directory with the go command (the baseline,
// the execution tracer peer, and the OpenTelemetry peer in its own module),
// [TigrisBuild] through `tigris go build`.
//
//	d := &bench.Driver{Dir: "moobench-results", Progress: os.Stderr}
//	res, err := d.Run(ctx, bench.QuickPlan(root, bench.TigrisBuild(tigrisExe, root)))
//	...
//	sum, err := bench.Report(d.Dir, res, true) // results.json, summary.json, table.txt, charts, raw.csv.gz
//	bench.WriteTable(os.Stdout, sum)
//
// `tigris bench` (cmd/tigris/bench_moobench.go) is a command around exactly
// that, with [Plan.With] for its parameter flags and [Describe] for what it is
// about to do. [QuickPlan], [FullPlan] and [TinyPlan] say what they run and how
// long it takes; FullPlan shortens the thesis' 500 µs experiment
// ([FullPlanLongCalls]).
//
// # Output
//
// [WriteRawCSV] (experiment, config, run, goroutine, call, warmup, ns: every
// measurement, warm-up included), [WriteJSON] (the [Summary]), [WriteTable] (a
// terminal table in the style of the thesis' Table 11.1, then the portions per
// monitored call, the records written and lost with the allocations, and the
// verdicts on the performance targets) and [WriteSVG] (one bar per configuration,
// stacked T/I/C/W segments of the medians, as in the thesis' figures). [Report]
// writes them all into a directory, with results.json, from which
// [ReadResults] and [Summarize] make the report again.
package bench
