// Command moobench is MooBench's monitored application and benchmark thread for
// tigris (van Hoorn, Waller et al.; see shared/papers/moobench-monitoring-
// overhead-thesis.txt, ch. 8): one or more goroutines call monitoredMethod
// -calls times each and time every top-level call into a preallocated array.
// The raw timings go to -out in the format described in raw.go; the bench
// package (github.com/tigrisgo/tigris/bench) builds this program in several
// variants, runs it, discards the warm-up share and reports the portions of
// monitoring overhead.
//
// The same source is built plainly (T) and through tigris (T+I, T+I+C,
// T+I+C+W: the mode comes from TIGRIS_* variables at run time, see tigris.yaml),
// and with -tags exectrace as the Go execution tracer peer (exectrace.go: a
// runtime/trace user region around every call, the trace written to a file).
// examples/moobench-otel is the OpenTelemetry peer; it copies raw.go and the
// loop, so keep them in step.
//
// Nothing is printed while the benchmark runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.calls, "calls", 2_000_000, "top-level calls per goroutine")
	flag.IntVar(&cfg.depth, "depth", 10, "recursion depth: monitored calls per top-level call")
	flag.DurationVar(&cfg.methodTime, "method-time", 0, "busy-wait at the deepest level of each call")
	flag.IntVar(&cfg.goroutines, "goroutines", 1, "benchmark goroutines, each with its own timing array")
	flag.IntVar(&cfg.clockPairs, "clockpair", 2_000_000, "nanotime pairs timed after the benchmark (0: skip)")
	flag.StringVar(&cfg.out, "out", "", "raw data file (binary, see raw.go); empty: no file")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "moobench:", err)
		os.Exit(1)
	}
}

type config struct {
	calls, depth, goroutines, clockPairs int
	methodTime                           time.Duration
	out                                  string
}

func run(cfg config) error {
	if cfg.calls < 0 || cfg.depth < 1 || cfg.goroutines < 1 || cfg.methodTime < 0 || cfg.clockPairs < 0 {
		return fmt.Errorf("invalid parameters: -calls %d -depth %d -goroutines %d -method-time %v -clockpair %d (want calls ≥ 0, depth ≥ 1, goroutines ≥ 1, method-time ≥ 0, clockpair ≥ 0)",
			cfg.calls, cfg.depth, cfg.goroutines, cfg.methodTime, cfg.clockPairs)
	}
	h := header{
		Goroutines: uint32(cfg.goroutines),
		Calls:      int64(cfg.calls),
		Depth:      int64(cfg.depth),
		MethodTime: int64(cfg.methodTime),
	}
	stop, err := startPeer()
	if err != nil {
		return err
	}
	res := benchmark(cfg.calls, cfg.depth, cfg.methodTime, cfg.goroutines, monitoredCall)
	if err := stop(); err != nil {
		return err
	}
	h.Elapsed, h.Mallocs, h.AllocBytes = res.elapsed, res.mallocs, res.allocBytes
	h.ClockPairNs, h.ClockPairIters = clockPair(cfg.clockPairs)
	if cfg.out == "" {
		return nil
	}
	return writeRaw(cfg.out, &h, res.timings)
}
