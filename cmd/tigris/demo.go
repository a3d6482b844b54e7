package main

// tigris demo: the flags of evaluation.Demo.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench/evaluation"
)

func newDemoCmd() *cobra.Command {
	var o evaluation.DemoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build the bundled PetClinic service with tigris, load it, and show both phases",
		Long: `demo runs the whole story on the example service in examples/petclinic:

 1. builds it with "tigris go build" (on an empty build cache the first build
    compiles the service, its dependencies and the standard library: about a
    minute on a small machine, a few seconds after that);
 2. starts it with the admin endpoint on a free loopback port, every probe of the
    service and repository layers coarse (phase 1), and the analyzer evaluating
    "(more frequent ∪ most expensive) ∩ least changeable" every --interval;
 3. drives it with simulated users (5 to 20, three navigation patterns) for
    --duration, showing progress and each analysis cycle as it happens: which
    functions were selected for fine tracing (phase 2), and why;
 4. prints the phase-1 statistics, the selections, the sampling rate and what
    the trace writer wrote and dropped;
 5. stops the service, converts its trace to pprof and to Chrome trace events,
    and says how to open them;
 6. with --export, the simulated users send a W3C traceparent with each request
    and the service runs with -trace-context, so tigris's recorded traces join
    the requests' traces: the users' client spans go to the endpoint beside
    tigris's spans, and the demo shows one request's trace with both.

Run it from the tigris repository. The binary, the trace and its conversions
go to --out (./tigris-demo); the service is stopped whatever happens.`,
		Example: `  go run ./cmd/tigris demo
  go run ./cmd/tigris demo --duration 20s --interval 5s --out /tmp/tigris-demo
  go run ./cmd/tigris demo --export http://127.0.0.1:4318   # to an OpenTelemetry Collector`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("demo: finding the tigris executable: %w", err)
			}
			o.Tigris = exe
			stdout := cmd.OutOrStdout()
			o.Convert = func(format, trace string) error {
				return runConvert(io.Discard, stdout, format, "", []string{trace})
			}
			return evaluation.Demo(ctx, stdout, cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", time.Minute, "how long to drive load")
	f.DurationVar(&o.Interval, "interval", 10*time.Second, "analysis interval")
	f.StringVar(&o.Sampling, "sampling", "10%", "sampling rate of the selected functions (the ceiling when a budget is set)")
	f.StringVar(&o.Budget, "budget", "off", "share of CPU time fine tracing may take, e.g. 1%; the analyzer lowers the sampling rate to stay inside")
	f.StringVar(&o.Out, "out", "tigris-demo", "directory for the binary, the trace and its conversions (\"\": a temporary one, removed at the end)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the simulated users")
	f.StringVar(&o.Export, "export", "", "OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318) to send the demo's spans and statistics to, as tigris export does, each request's trace joined by tigris's method spans")
	return cmd
}
