package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

func newReadCmd() *cobra.Command {
	var (
		asJSON  bool
		traceID string
	)
	cmd := &cobra.Command{
		Use:   "read [--json] [--trace-id ID] FILE...",
		Short: "Print the items of trace files (.tgr), one per line",
		Long: `read prints every item of the trace files a monitored program wrote, in file
order, one per line: file headers, probe definitions, call records, loss
reports (records the program's writer dropped) and gaps (bytes the reader had
to skip, e.g. the unfinished end of a file after a crash).

A record line shows the call's entry time (UTC), trace id, execution order
index and stack depth (eoi/ess), goroutine, duration and the function's
signature, with [error] or [panic] when the call failed. --json prints one JSON
object per line instead ("kind": header, probe, record, loss, gap, link or
remote; times also as Unix nanoseconds).

--trace-id prints only the records, remote parents and links of the traces
that joined the request trace of that W3C trace id (32 hex digits, either
case), as tigris stats --trace-id keeps their call trees: the files are read
twice, since a trace's records may come before its remote parent.

One FILE is read with the files rotation made from it (app.tgr, app.1.tgr, ...);
several are read as one sequence, each process's files in order. Damage is
skipped and summed up on standard error; read fails only when nothing could be
read. docs/trace-tools.md describes every field.`,
		Example: `  tigris read tigris-out/app-4242.tgr | head
  tigris read --json tigris-out/*.tgr | jq 'select(.kind=="record" and .error)'
  tigris read --trace-id 4bf92f3577b34da6a3ce929d0e0e4736 tigris-out/*.tgr`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRead(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, asJSON, traceID)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines instead of text")
	cmd.Flags().StringVar(&traceID, "trace-id", "", traceIDUsage)
	return cmd
}

func runRead(stdout, stderr io.Writer, paths []string, asJSON bool, traceID string) error {
	joined, err := joinedTraces("read", paths, traceID)
	if err != nil {
		return err
	}
	r, err := openTraces("read", stderr, paths)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := traceconv.WriteLines(stdout, r, asJSON, traceconv.Options{Joined: joined})
	if err != nil {
		return fmt.Errorf("read: writing the output: %w", err)
	}
	if err := checkInput("read", stderr, paths, &rep); err != nil {
		return err
	}
	noneJoined("read", stderr, joined, &rep)
	return nil
}

// The helpers below are shared by read, stats and convert.

// traceIDUsage is the help of read's and stats' --trace-id.
const traceIDUsage = "only the traces that joined the request trace of this W3C trace id (32 hex digits, either case)"

// joinedTraces finds the traces that joined the request trace of --trace-id
// (nil without it) in a read of the files of its own: a trace's records may
// come before its remote parent (traceconv.Joined), so the command's read
// needs them all from its start.
func joinedTraces(cmd string, paths []string, traceID string) (*traceconv.Joined, error) {
	if traceID == "" {
		return nil, nil
	}
	id, err := traceconv.ParseTraceID(traceID)
	if err != nil {
		return nil, fmt.Errorf("%s: --trace-id: %w", cmd, err)
	}
	r, _, err := traceconv.Open(paths)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	defer r.Close()
	// A read error stops the command's own read at the same place, which
	// reports it (checkInput): what was read before it counts.
	joined, _ := traceconv.FindJoined(r, id)
	return joined, nil
}

// noneJoined says on stderr why the output of --trace-id is empty.
func noneJoined(cmd string, stderr io.Writer, joined *traceconv.Joined, rep *traceconv.Report) {
	if joined != nil && joined.Len() == 0 {
		fmt.Fprintf(stderr, "%s: no trace joined the request trace %s (%d records read; tigris read shows the remote parents the traces joined)\n",
			cmd, tracecontext.FormatTraceID(joined.ID), rep.Records)
	}
}

// openTraces opens the trace files, warning on stderr about those it has to
// leave out; it fails only when none can be opened.
func openTraces(cmd string, stderr io.Writer, paths []string) (*writer.Reader, error) {
	r, skipped, err := traceconv.Open(paths)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	for _, e := range skipped {
		fmt.Fprintf(stderr, "%s: warning: skipping %v\n", cmd, e)
	}
	return r, nil
}

// checkInput prints what the input lost and fails when nothing could be read.
func checkInput(cmd string, stderr io.Writer, paths []string, rep *traceconv.Report) error {
	if rep.Empty() {
		why := "empty"
		switch {
		case rep.ReadErr != nil:
			why = rep.ReadErr.Error()
		case rep.SkippedBytes > 0:
			why = fmt.Sprintf("no tigris trace data (%d bytes skipped)", rep.SkippedBytes)
		}
		return fmt.Errorf("%s: nothing readable in %s: %s", cmd, strings.Join(paths, ", "), why)
	}
	for _, w := range rep.Warnings() {
		fmt.Fprintf(stderr, "%s: warning: %s\n", cmd, w)
	}
	return nil
}

// progress reports how far a long conversion is on stderr: a line every
// Options.ProgressEvery records, or on a terminal one line rewritten in place.
type progress struct {
	cmd     string
	w       io.Writer
	tty     bool
	printed bool
}

func newProgress(cmd string, w io.Writer) *progress {
	p := &progress{cmd: cmd, w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(pr traceconv.Progress) {
	if pr.Done {
		if p.tty && p.printed {
			fmt.Fprint(p.w, "\r\x1b[K") // clear the line for the final message
		}
		return
	}
	rate := ""
	if s := pr.Elapsed.Seconds(); s > 0 {
		rate = fmt.Sprintf(" (%.1fM records/s)", float64(pr.Records)/s/1e6)
	}
	line := fmt.Sprintf("%s: %dM records read%s, %s", p.cmd, pr.Records/1_000_000, rate, pr.Elapsed.Round(time.Second/10))
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}
