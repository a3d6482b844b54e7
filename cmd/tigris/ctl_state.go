package main

// tigris ctl stats, writer, health and metrics: what the program measured.

import (
	"fmt"
	"slices"
	"strconv"
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
		Use:   "stats [--sort COLUMN] [--order asc|desc] [--top N] [--match POINTCUT] [--mode MODE]",
		Short: "Show the coarse statistics per probe since the program started",
		Long: `stats prints each probe's calls, mean and standard deviation of the duration,
total time, errors, panics and mean concurrency, measured while the probe was
coarse or fine. --sort takes any column of the table, in any case:
` + strings.Join(statsColumnNames(), ", ") + `;
or another key of the program: ` + strings.Join(statsOtherKeys(), ", ") + `.
Quantities sort largest first, id, mode and signature smallest first, unless
--order says otherwise.`,
		Example: `  tigris ctl stats --sort total --top 10
  tigris ctl stats --match 'execution(* shop/repo.*(..))' --sort errors`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			sortBy := strings.ToLower(q.Sort)
			key, err := statsSortKey(q.Sort)
			if err != nil {
				return err
			}
			q.Sort = key
			l, err := c.client.Stats(c.ctx(), q)
			return show(c, l, err, func(l *admin.StatsList) error {
				header := make([]string, len(statsColumns))
				for i, col := range statsColumns {
					header[i] = col.header
				}
				rows := make([]string, len(l.Stats))
				for i := range l.Stats {
					cells := make([]string, len(statsColumns))
					for j, col := range statsColumns {
						cells[j] = col.cell(&l.Stats[i])
					}
					rows[i] = strings.Join(cells, "\t")
				}
				if err := c.table(strings.Join(header, "\t"), rows); err != nil {
					return err
				}
				if len(l.Stats) < l.Matched {
					return c.printf("(%d of %d probes, by %s %s)\n", len(l.Stats), l.Matched, sortBy, l.Order)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Sort, "sort", "total", "column or key to sort by")
	f.StringVar(&q.Order, "order", "", "asc or desc (default: by key)")
	f.IntVar(&q.Top, "top", 0, "show only the first N probes (0: all)")
	filterFlags(cmd, &q.Filter)
	return cmd
}

// statsColumns are the columns of ctl stats, in order: the header, the key of
// the admin endpoint's ?sort= (admin.SortKeys) that orders by the column, and
// the cell. --sort takes every header (statsSortKey), so what the table shows
// is what it sorts by.
var statsColumns = []struct {
	header, key string
	cell        func(*admin.StatsRow) string
}{
	{"ID", "id", func(s *admin.StatsRow) string { return strconv.FormatUint(uint64(s.ID), 10) }},
	{"MODE", "mode", func(s *admin.StatsRow) string { return string(s.Mode) }},
	{"CALLS", "count", func(s *admin.StatsRow) string { return strconv.FormatUint(s.Count, 10) }},
	{"MEAN", "mean", func(s *admin.StatsRow) string { return human.Ns(s.MeanNs) }},
	{"STDDEV", "stddev", func(s *admin.StatsRow) string { return human.Ns(s.StdDevNs) }},
	{"TOTAL", "total", func(s *admin.StatsRow) string { return human.Ns(s.TotalNs) }},
	{"ERRORS", "errors", func(s *admin.StatsRow) string { return strconv.FormatUint(s.Errors, 10) }},
	{"PANICS", "panics", func(s *admin.StatsRow) string { return strconv.FormatUint(s.Panics, 10) }},
	{"CONC", "concurrency", func(s *admin.StatsRow) string { return human.Num(s.Concurrency) }},
	{"SIGNATURE", "signature", func(s *admin.StatsRow) string { return s.Signature }},
}

// statsColumnNames are the headers of statsColumns in lower case.
func statsColumnNames() []string {
	names := make([]string, len(statsColumns))
	for i, col := range statsColumns {
		names[i] = strings.ToLower(col.header)
	}
	return names
}

// statsOtherKeys are the admin endpoint's sort keys that no column shows under
// its own name: the keys of renamed columns (count for calls) and of
// statistics the table leaves out (interarrival, ...).
func statsOtherKeys() []string {
	var keys []string
	for _, k := range admin.SortKeys {
		if !slices.Contains(statsColumnNames(), k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// statsSortKey returns the admin endpoint's sort key for --sort s: a column's
// header in any case, or one of the endpoint's keys.
func statsSortKey(s string) (string, error) {
	name := strings.ToLower(s)
	for _, col := range statsColumns {
		if name == strings.ToLower(col.header) {
			return col.key, nil
		}
	}
	if slices.Contains(admin.SortKeys, name) {
		return name, nil
	}
	return "", fmt.Errorf("stats: --sort: %q is not a sort key (want a column: %s; or %s)", s,
		strings.Join(statsColumnNames(), ", "), strings.Join(statsOtherKeys(), ", "))
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
