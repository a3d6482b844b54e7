package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/queryout"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/tracequery"
)

func newQueryCmd() *cobra.Command {
	var (
		file     string
		asJSON   bool
		lateness time.Duration
		maxCPU   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "query FILE.tgr... (QUERY | --file QUERYFILE)",
		Short: "Run a monitoring query over trace files",
		Long: `query runs a monitoring query (docs/queries.md) over the fine records of trace
files, with the engine a running program uses for tigris ctl query: over the
trace of a run it gives the answer the query gave live, for the calls the
trace holds. The last argument is the query unless --file gives it.

The runtime streams (SAMPLE(cpu, ...) and the others) are not in trace files.
A trigger prints each firing and what its actions would have done. A window is
printed once records --lateness past its end have been read; an aggregate
without WINDOW prints its result at the end. --json prints the JSON lines that
tigris ctl query --json prints. A query that takes more than --max-cpu of CPU
time (1m by default) stops with an error; --max-cpu 0 lifts the bound.`,
		Example: `  tigris query tigris-out/app-4242.tgr "SELECT function, count(*), p99(duration)
      FROM calls GROUP BY function WINDOW 10s"
  tigris query --json tigris-out/*.tgr --file slow.sql`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, qargs := args, []string(nil)
			if file == "" {
				if len(args) < 2 {
					return fmt.Errorf("query: give the trace files and then the query (or --file)")
				}
				paths, qargs = args[:len(args)-1], args[len(args)-1:]
			}
			text, err := queryText(cmd.InOrStdin(), qargs, file)
			if err != nil {
				return fmt.Errorf("query: %v", err)
			}
			var out queryout.Printer = &queryout.Table{W: cmd.OutOrStdout(), Buffered: true}
			if asJSON {
				out = &queryout.JSON{W: cmd.OutOrStdout()}
			}
			_, err = tracequery.Run(cmd.Context(), paths, text, tracequery.Options{Lateness: lateness, MaxCPU: maxCPU}, out)
			return queryError(err)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "read the query from QUERYFILE (- for standard input)")
	f.BoolVar(&asJSON, "json", false, "print JSON lines")
	f.DurationVar(&lateness, "lateness", tracequery.DefaultLateness, "how far out of order records may come, in trace time")
	f.DurationVar(&maxCPU, "max-cpu", tracequery.DefaultMaxCPU, "the most CPU time the query may take (0: no bound)")
	return cmd
}

// queryError adds the query line and a caret under the column to an error
// at a position of the query.
func queryError(err error) error {
	var qe *query.Error
	if !errors.As(err, &qe) {
		return err
	}
	if c := qe.Caret(); c != "" {
		return fmt.Errorf("%w\n    %s", err, strings.ReplaceAll(c, "\n", "\n    "))
	}
	return err
}
