package main

// tigris ctl stats, writer, health and metrics: what the program measured.

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func (c *ctl) statsCmd() *cobra.Command {
	var q adminclient.StatsQuery
	cmd := &cobra.Command{
		Use:   "stats [--sort KEY] [--order asc|desc] [--top N] [--match POINTCUT] [--mode MODE]",
		Short: "Show the coarse statistics per probe since the program started",
		Long: `stats prints each probe's calls, mean and standard deviation of the duration,
total time, errors, panics and mean concurrency, measured while the probe was
coarse or fine. --sort takes ` + strings.Join(admin.SortKeys, ", ") + `;
quantities sort largest first, id and signature smallest first, unless --order
says otherwise.`,
		Example: `  tigris ctl stats --sort total --top 10
  tigris ctl stats --match 'execution(* shop/repo.*(..))' --sort errors`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := c.client.Stats(c.ctx(), q)
			return show(c, l, err, func(l *admin.StatsList) error {
				rows := make([]string, len(l.Stats))
				for i, s := range l.Stats {
					rows[i] = fmt.Sprintf("%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s", s.ID, s.Mode, s.Count, human.Ns(s.MeanNs), human.Ns(s.StdDevNs),
						human.Ns(s.TotalNs), s.Errors, s.Panics, human.Num(s.Concurrency), s.Signature)
				}
				if err := c.table("ID\tMODE\tCALLS\tMEAN\tSTDDEV\tTOTAL\tERRORS\tPANICS\tCONC\tSIGNATURE", rows); err != nil {
					return err
				}
				if len(l.Stats) < l.Matched {
					return c.printf("(%d of %d probes, by %s %s)\n", len(l.Stats), l.Matched, l.Sort, l.Order)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Sort, "sort", "total", "sort key")
	f.StringVar(&q.Order, "order", "", "asc or desc (default: by key)")
	f.IntVar(&q.Top, "top", 0, "show only the first N probes (0: all)")
	filterFlags(cmd, &q.Filter)
	return cmd
}

func (c *ctl) writerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "writer",
		Short: "Show the trace writer's counters and current file",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			w, err := c.client.Writer(c.ctx())
			return show(c, w, err, func(w *admin.WriterState) error {
				if !w.Active {
					return c.printf("no writer open (it opens when a probe first goes fine)\n")
				}
				return c.table("", []string{
					fmt.Sprintf("file\t%s", w.CurrentFile),
					fmt.Sprintf("written\t%d records", w.Written),
					fmt.Sprintf("queued\t%d records", w.Queued),
					fmt.Sprintf("dropped\t%d records", w.Dropped),
					fmt.Sprintf("bytes\t%s", human.Bytes(int64(w.Bytes))),
					fmt.Sprintf("files\t%d", w.Files),
					fmt.Sprintf("errors\t%d", w.Errors),
				})
			})
		},
	}
	cmd.AddCommand(c.writerRecentCmd()) // ctl_recent.go
	return cmd
}

func (c *ctl) healthCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check that the program answers, with a summary",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := c.client.Health(c.ctx())
			return show(c, h, err, func(h *admin.Health) error {
				return c.printf("%s: pid %d, %s, up %s, %d probes (%d off, %d coarse, %d fine), sampling %s%s\n",
					h.Status, h.PID, h.Go, time.Duration(h.UptimeSeconds*1e9).Round(time.Second), h.Probes,
					h.Modes[settings.Off], h.Modes[settings.Coarse], h.Modes[settings.Fine], settings.FormatPercent(h.Sampling),
					inForce(h.Sampling, h.EffectiveSampling, h.SamplingReason))
			})
		},
	}
}

func (c *ctl) metricsCmd() *cobra.Command {
	var f adminclient.Filter
	cmd := &cobra.Command{
		Use:   "metrics [--match POINTCUT] [--mode MODE]",
		Short: "Print the Prometheus metrics the program exposes on /metrics",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// The reply is text, not JSON: printed as it comes (--json did).
			text, err := c.client.Metrics(c.ctx(), f)
			return show(c, &text, err, func(*[]byte) error {
				_, err := c.cmd.OutOrStdout().Write(text)
				return err
			})
		},
	}
	filterFlags(cmd, &f)
	return cmd
}
