// Command moobench-otel is the OpenTelemetry peer of examples/moobench: the same
// MooBench monitored application and benchmark loop, with every call of
// monitoredMethod wrapped in an OpenTelemetry span (tracer.Start/span.End, the
// child span carried in the context as a Go program would). The TracerProvider
// uses the SDK's BatchSpanProcessor with its defaults and the stdouttrace
// exporter writing JSON to -otel-out: what a Go service gets out of the box.
//
// This is a module of its own so that the OpenTelemetry dependencies never enter
// tigris's go.mod. loop.go and raw.go are copies of examples/moobench's; the raw
// data file has the same format. Build it with a plain go build in this
// directory (bench.GoBuild does).
//
// At exit it prints one line to stderr:
//
//	moobench-otel: spans started=N exported=M dropped=D
//
// The batch processor drops spans when its queue is full unless -otel-blocking
// is set.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.calls, "calls", 2_000_000, "top-level calls per goroutine")
	flag.IntVar(&cfg.depth, "depth", 10, "recursion depth: monitored calls per top-level call")
	flag.DurationVar(&cfg.methodTime, "method-time", 0, "busy-wait at the deepest level of each call")
	flag.IntVar(&cfg.goroutines, "goroutines", 1, "benchmark goroutines, each with its own timing array")
	flag.IntVar(&cfg.clockPairs, "clockpair", 2_000_000, "nanotime pairs timed after the benchmark (0: skip)")
	flag.StringVar(&cfg.out, "out", "", "raw data file (binary, see raw.go); empty: no file")
	flag.StringVar(&cfg.spans, "otel-out", "moobench-otel-spans.json", "file the stdouttrace exporter writes")
	flag.BoolVar(&cfg.blocking, "otel-blocking", false, "make the batch span processor block instead of dropping when its queue is full")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "moobench-otel:", err)
		os.Exit(1)
	}
}

type config struct {
	calls, depth, goroutines, clockPairs int
	methodTime                           time.Duration
	out, spans                           string
	blocking                             bool
}

// tracer is set before the benchmark starts and read by monitoredMethod.
var tracer trace.Tracer

func run(cfg config) error {
	if cfg.calls < 0 || cfg.depth < 1 || cfg.goroutines < 1 || cfg.methodTime < 0 || cfg.clockPairs < 0 {
		return fmt.Errorf("invalid parameters: -calls %d -depth %d -goroutines %d -method-time %v -clockpair %d (want calls ≥ 0, depth ≥ 1, goroutines ≥ 1, method-time ≥ 0, clockpair ≥ 0)",
			cfg.calls, cfg.depth, cfg.goroutines, cfg.methodTime, cfg.clockPairs)
	}
	f, err := os.Create(cfg.spans)
	if err != nil {
		return err
	}
	defer f.Close()
	stdout, err := stdouttrace.New(stdouttrace.WithWriter(f))
	if err != nil {
		return fmt.Errorf("creating the stdouttrace exporter: %w", err)
	}
	exp := &countingExporter{SpanExporter: stdout}
	var opts []sdktrace.BatchSpanProcessorOption
	if cfg.blocking {
		opts = append(opts, sdktrace.WithBlocking())
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, opts...))
	tracer = tp.Tracer("github.com/tigrisgo/tigris/examples/moobench-otel")

	h := header{
		Goroutines: uint32(cfg.goroutines),
		Calls:      int64(cfg.calls),
		Depth:      int64(cfg.depth),
		MethodTime: int64(cfg.methodTime),
	}
	res := benchmark(cfg.calls, cfg.depth, cfg.methodTime, cfg.goroutines, monitoredCall)
	h.Elapsed, h.Mallocs, h.AllocBytes = res.elapsed, res.mallocs, res.allocBytes
	h.ClockPairNs, h.ClockPairIters = clockPair(cfg.clockPairs)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutting down the tracer provider: %w", err)
	}
	started := int64(cfg.calls) * int64(cfg.depth) * int64(cfg.goroutines)
	exported := exp.spans.Load()
	fmt.Fprintf(os.Stderr, "moobench-otel: spans started=%d exported=%d dropped=%d\n", started, exported, started-exported)
	if cfg.out == "" {
		return nil
	}
	return writeRaw(cfg.out, &h, res.timings)
}

// countingExporter counts the spans that reach the exporter, to tell how many
// the batch processor dropped.
type countingExporter struct {
	sdktrace.SpanExporter
	spans atomic.Int64
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return e.SpanExporter.ExportSpans(ctx, spans)
}

func monitoredCall(methodTime time.Duration, depth int) int64 {
	return monitoredMethod(context.Background(), methodTime, depth)
}

// monitoredMethod is examples/moobench's monitoredMethod with a span around
// every call, nested through the context.
//
//go:noinline
func monitoredMethod(ctx context.Context, methodTime time.Duration, recDepth int) int64 {
	ctx, span := tracer.Start(ctx, "monitoredMethod")
	defer span.End()
	if recDepth > 1 {
		return monitoredMethod(ctx, methodTime, recDepth-1)
	}
	exit := nanotime() + int64(methodTime)
	var now int64
	for {
		now = nanotime()
		if now >= exit {
			return now
		}
	}
}
