package main

// tigris dash: the flags of package dash.

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/dash"
	"github.com/tigrisgo/tigris/tracequery"
)

func newDashCmd() *cobra.Command {
	var (
		cfg dash.Config
		an  analyzeOptions
		// maxCPU bounds a query of the box over a trace (tigris query's
		// --max-cpu).
		maxCPU time.Duration
	)
	cmd := &cobra.Command{
		Use:   "dash [flags] ADDR | FILE.tgr",
		Short: "Open a web page on a running program's monitoring, or on a trace",
		Long: `dash serves a web page on a running program (ADDR: its admin endpoint,
host:port or URL) or on a recorded trace (FILE.tgr): the top functions by time
with their latency histograms and sparklines, the two-phase analyzer's grouping,
selections and their history, the probe modes with controls to switch them, the
recent call trees as flame graphs (with Perfetto and pprof downloads), the
trace writer's health, and a box for monitoring queries (docs/queries.md), run
on the program or over the trace. A live page refreshes itself every --refresh.

The page is served by this command, on loopback unless --listen says otherwise,
from files compiled into tigris: the monitored program carries none of it. Against
a program dash uses only the admin API (what tigris ctl uses), with --token
(default $TIGRIS_ADMIN_TOKEN) when the program has one; the token never reaches
the browser. Changes are accepted only from the page itself (same origin, with
its form token). On a trace, the analyzer section evaluates --criteria (else
tigris.yaml's) over the recorded calls. docs/dashboard.md describes the page.`,
		Example: `  tigris dash 127.0.0.1:7070
  tigris dash --open tigris-out/app-4242.tgr
  TIGRIS_ADMIN_TOKEN=... tigris dash --listen 127.0.0.1:8080 10.0.0.5:7070`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Target = args[0]
			if fi, err := os.Stat(cfg.Target); err == nil && !fi.IsDir() {
				// A trace: the analyzer section needs a filter.
				if cfg.Analysis, err = analysisSettings(cmd, an); err != nil {
					return fmt.Errorf("dash: %w", err)
				}
			}
			if !cmd.Flags().Changed("token") {
				cfg.Token = os.Getenv("TIGRIS_ADMIN_TOKEN")
			}
			cfg.Stdout, cfg.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			cfg.Query = dashQueries(cfg.Target, cfg.Token, maxCPU) // dash_query.go
			return dash.Run(ctx, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", dash.DefaultListen, "address to serve the page on (loopback unless you say otherwise)")
	// Not defaulted from the environment here: --help would print it.
	f.StringVar(&cfg.Token, "token", "", "the program's admin token, for changes (default $TIGRIS_ADMIN_TOKEN; kept in tigris dash, never sent to the browser)")
	f.BoolVar(&cfg.Open, "open", false, "open the page in a browser")
	f.DurationVar(&cfg.Refresh, "refresh", 3*time.Second, "how often a live program is read and the page refreshed")
	f.BoolVar(&cfg.ReadOnly, "read-only", false, "show, but switch nothing")
	f.StringVar(&an.criteria, "criteria", "", "trace: the TigrisDSL filter to evaluate (default: tigris.yaml's, else the built-in default)")
	f.StringArrayVar(&an.metrics, "metric", nil, "trace: bind a criterion to a metric, e.g. expensive=mean-time")
	f.StringVar(&an.config, "config", "", "trace: tigris.yaml to take the filter from")
	f.DurationVar(&maxCPU, "max-cpu", tracequery.DefaultMaxCPU, "trace: the most CPU time a query of the query box may take (0: no bound)")
	return cmd
}
