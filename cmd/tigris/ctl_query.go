package main

// tigris ctl query and queries: monitoring queries against a running
// program (docs/queries.md).

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/queryout"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

func (c *ctl) queryCmd() *cobra.Command {
	var (
		file    string
		detach  bool
		explain bool
		dur     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "query [--detach | --explain] [--for DURATION] (QUERY | --file FILE)",
		Short: "Run a monitoring query on the program and print its rows as they come",
		Long: `query posts a query (docs/queries.md) to the program: the program switches on
exactly the probes it needs, at the cheapest mode, with the conditions it can
decide at a probe's exit pushed down, and streams the rows. Interrupt (Ctrl-C)
or --for ends the query: the program restores every probe, and the last rows
(the running result of an aggregate without WINDOW, partial windows) are
printed before ctl exits. A second interrupt exits at once.

--detach starts the text's queries and triggers and returns: they run until
tigris ctl queries cancel ID, and its CREATE STREAMs stay for later queries.
--explain prints the plan (probes, modes, pushed-down conditions, estimated
cost) and runs nothing. --json prints the result stream as JSON lines.

A query no probe of the program can feed is refused at once, saying why.
What a query leaves out (calls shed over its budget, lost to a full queue) is
noted among its rows, as it starts and per window.`,
		Example: `  tigris ctl query "SELECT function, count(*), p99(duration) FROM calls
      WHERE package LIKE '%/repository' GROUP BY function WINDOW 10s"
  tigris ctl query --explain "SELECT * FROM calls WHERE duration > 50ms"
  tigris ctl query --detach --file slow-trigger.sql`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			text, err := queryText(c.cmd.InOrStdin(), args, file)
			if err != nil {
				return err
			}
			switch {
			case explain:
				p, err := c.client.Explain(c.ctx(), text)
				return show(c, p, err, func(*admin.QueryPosted) error { return c.printPosted(p) })
			case detach:
				p, err := c.client.PostQueries(c.ctx(), text)
				return show(c, p, err, func(*admin.QueryPosted) error { return c.printPosted(p) })
			}
			return c.stream(text, dur)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "read the query from FILE (- for standard input)")
	f.BoolVar(&detach, "detach", false, "start the queries and return; they run until cancelled")
	f.BoolVar(&explain, "explain", false, "print the plan, run nothing")
	f.DurationVar(&dur, "for", 0, "end the query after DURATION (0: until interrupted or its LIMIT)")
	return cmd
}

// queryText is the query of the argument or of --file.
func queryText(stdin io.Reader, args []string, file string) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", fmt.Errorf("give the query as an argument or with --file, not both")
	case file == "-":
		b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		return string(b), err
	case len(args) == 0:
		return "", fmt.Errorf("no query (give one as an argument, or --file FILE)")
	}
	return args[0], nil
}

// stream runs an attached query until it ends, printing its rows. The first
// interrupt, or --for, cancels it in the program and reads its last rows; the
// end line then says the user ended it, not that it was cancelled.
func (c *ctl) stream(text string, dur time.Duration) error {
	ctx, stop := context.WithCancel(c.ctx())
	defer stop()
	sigs := make(chan os.Signal, 2)
	notifyInterrupt(sigs)
	defer signal.Stop(sigs)
	var out queryout.Printer = &queryout.Table{W: c.cmd.OutOrStdout()}
	if c.asJSON {
		out = nil // the client's Raw option prints the stream itself
	}
	var endedBy atomic.Pointer[string] // why ctl cancelled the query, for the end line
	var early atomic.Bool              // interrupted before the query started
	ids := make(chan int, 1)
	go func() {
		var id int
		select {
		case id = <-ids:
		case <-sigs:
			// The program is still compiling or planning: leaving stops it.
			early.Store(true)
			stop()
			return
		case <-ctx.Done():
			return
		}
		var timer <-chan time.Time
		if dur > 0 {
			timer = time.After(dur)
		}
		why := "ended by an interrupt"
		select {
		case <-sigs:
		case <-timer:
			why = "ended after " + dur.String() + " (--for)"
		case <-ctx.Done():
			return
		}
		endedBy.Store(&why)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.client.EndQuery(cctx, id, why); err != nil {
			fmt.Fprintln(c.cmd.ErrOrStderr(), "tigris: cancelling the query:", err)
			stop()
			return
		}
		select {
		case <-sigs:
			stop()
		case <-ctx.Done():
		}
	}()
	err := c.client.Query(ctx, text, func(ev adminclient.QueryEvent) error {
		if ev.Head != nil {
			ids <- ev.Head.ID
			if !c.asJSON {
				fmt.Fprintf(c.cmd.ErrOrStderr(), "query %d: %d probe(s), %d sampler(s); interrupt to end it\n", ev.Head.ID, ev.Head.Probes, ev.Head.Samplers)
			}
		}
		if out == nil {
			return nil
		}
		// A program before ?reason= says "cancelled".
		if why := endedBy.Load(); why != nil && ev.End == "cancelled" {
			ev.End = *why
		}
		return queryout.PrintEvent(out, ev)
	})
	if early.Load() {
		return fmt.Errorf("interrupted before the query started (the program stops compiling it when ctl leaves); nothing runs")
	}
	return c.explain(err)
}

// notifyInterrupt relays the interrupts ctl query handles to ch (tests
// send their own).
var notifyInterrupt = func(ch chan<- os.Signal) { signal.Notify(ch, os.Interrupt) }

func (c *ctl) printPosted(p *admin.QueryPosted) error {
	for _, s := range p.Statements {
		switch s.Kind {
		case "stream":
			if err := c.printf("stream %s created\n", s.Stream); err != nil {
				return err
			}
		case "explain":
			if err := c.printf("%s", s.Plan); err != nil {
				return err
			}
		default:
			if err := c.printf("query %d started (%s): %s\n%s", s.ID, s.Kind, s.Text, s.Plan); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *ctl) queriesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "queries",
		Short: "List the program's queries and named streams; cancel, watch or drop them",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := c.client.Queries(c.ctx())
			return show(c, l, err, func(l *admin.QueryList) error {
				rows := make([]string, 0, len(l.Queries))
				for _, q := range l.Queries {
					state := q.State
					if q.Reason != "" {
						state += " (" + q.Reason + ")"
					}
					rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%d\t%d\t%d\t%s", q.ID, q.Kind, state, q.Probes, q.Stats.Rows, q.Stats.Lost, q.Text))
				}
				if err := c.table("ID\tKIND\tSTATE\tPROBES\tROWS\tLOST\tQUERY", rows); err != nil {
					return err
				}
				for _, s := range l.Streams {
					if err := c.printf("stream %s: %s\n", s.Name, s.Text); err != nil {
						return err
					}
				}
				return c.printf("(limits: %d queries, %d probes each, %s of a core each)\n", l.Limits.Max, l.Limits.MaxProbes, human.Percent(l.Limits.Budget))
			})
		},
	}
	cancel := &cobra.Command{
		Use:   "cancel ID...",
		Short: "Cancel queries; their probes are restored when it returns",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			for _, a := range args {
				id, err := strconv.Atoi(a)
				if err != nil {
					return fmt.Errorf("%q is not a query id", a)
				}
				d, err := c.client.CancelQuery(c.ctx(), id)
				if err := show(c, d, err, func(d *admin.QueryDetail) error { return c.printf("query %d: %s\n", d.ID, d.Reason) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
	var from uint64
	watch := &cobra.Command{
		Use:   "watch ID",
		Short: "Print the rows of a running query (leaving does not cancel it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			id, err := strconv.Atoi(args[0])
			if err != nil {
				return fmt.Errorf("%q is not a query id", args[0])
			}
			var out queryout.Printer = &queryout.Table{W: c.cmd.OutOrStdout()}
			return c.explain(c.client.QueryResults(c.ctx(), id, from, func(ev adminclient.QueryEvent) error {
				if c.asJSON {
					return nil
				}
				return queryout.PrintEvent(out, ev)
			}))
		},
	}
	watch.Flags().Uint64Var(&from, "from", 0, "start at row N (0: the oldest the program keeps)")
	drop := &cobra.Command{
		Use:   "drop STREAM",
		Short: "Forget a named stream (queries reading it go on)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := c.client.DropStream(c.ctx(), args[0]); err != nil {
				return c.explain(err)
			}
			return c.printf("stream %s dropped\n", strings.TrimSpace(args[0]))
		},
	}
	cmd.AddCommand(cancel, watch, drop)
	return cmd
}
