package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/traceconv"
)

func newStatsCmd() *cobra.Command {
	var (
		sortBy  string
		top     int
		asJSON  bool
		traceID string
	)
	cmd := &cobra.Command{
		Use:   "stats [--sort COLUMN] [--top N] [--json] [--trace-id ID] FILE...",
		Short: "Summarize trace files per function: calls, errors, time quantiles",
		Long: `stats rebuilds the call trees of the trace files and prints one line per
function: calls, errors (calls that returned a non-nil error), panics, and the
total, mean, median (p50), 95th percentile and maximum of the calls' inclusive
time (TOTAL ... MAX) and of their exclusive time, the part not spent in recorded
callees (SELF ... SELF-MAX). Quantiles are exact up to 256 calls of a function
and within 1.6 % beyond.

--sort orders by a column (` + strings.Join(traceconv.StatColumnNames(), ", ") + `),
largest first, names alphabetically; the default is self, as in pprof -top.
--top keeps the first N lines; --json prints a JSON array with every duration in
nanoseconds. Files are read as by tigris read.

When traces joined request traces (a W3C traceparent or an OpenTelemetry span
context, docs/export.md), MAX-TRACE-ID names the request trace of each function's
slowest call, as Jaeger and Tempo show it; --trace-id keeps only the call trees of
the traces that joined the request trace of that id (either case; the files are
read twice, as by tigris read --trace-id).`,
		Example: `  tigris stats tigris-out/app-4242.tgr
  tigris stats --sort p95 --top 10 tigris-out/*.tgr
  tigris stats --json tigris-out/app-4242.tgr > stats.json
  tigris stats --trace-id 4bf92f3577b34da6a3ce929d0e0e4736 tigris-out/*.tgr`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, sortBy, top, asJSON, traceID)
		},
	}
	cmd.Flags().StringVar(&sortBy, "sort", "self", "column to sort by")
	cmd.Flags().IntVar(&top, "top", 0, "print only the first N functions (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&traceID, "trace-id", "", traceIDUsage)
	return cmd
}

func runStats(stdout, stderr io.Writer, paths []string, sortBy string, top int, asJSON bool, traceID string) error {
	// Check the flags before reading what may be gigabytes.
	if err := traceconv.SortStats(nil, sortBy); err != nil {
		return fmt.Errorf("stats: --sort: %w", err)
	}
	if top < 0 {
		return fmt.Errorf("stats: --top %d: want 0 (all) or more", top)
	}
	joined, err := joinedTraces("stats", paths, traceID)
	if err != nil {
		return err
	}
	opt := traceconv.Options{Progress: newProgress("stats", stderr).update, Joined: joined}
	r, err := openTraces("stats", stderr, paths)
	if err != nil {
		return err
	}
	defer r.Close()
	fs, rep, err := traceconv.Summarize(r, opt)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	if err := checkInput("stats", stderr, paths, &rep); err != nil {
		return err
	}
	noneJoined("stats", stderr, joined, &rep)
	traceconv.SortStats(fs, sortBy)
	if top > 0 && len(fs) > top {
		fs = fs[:top]
	}
	if asJSON {
		err = traceconv.WriteStatsJSON(stdout, fs)
	} else {
		err = traceconv.WriteStatsTable(stdout, fs)
	}
	if err != nil {
		return fmt.Errorf("stats: writing the output: %w", err)
	}
	return nil
}
