package main

// tigris ctl analysis: the two-phase analyzer's settings, a cycle now, the
// recent cycles.

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func (c *ctl) analysisCmd() *cobra.Command {
	get := func(*cobra.Command, []string) error {
		a, err := c.client.Analysis(c.ctx())
		return show(c, a, err, c.printAnalysis)
	}
	cmd := &cobra.Command{
		Use:   "analysis",
		Short: "Show or change the two-phase analysis, run it, show its history",
		Args:  cobra.NoArgs,
		RunE:  get,
	}
	cmd.AddCommand(
		&cobra.Command{Use: "get", Short: "Show the analysis settings", Args: cobra.NoArgs, RunE: get},
		c.analysisSetCmd(),
		&cobra.Command{
			Use:   "run",
			Short: "Run one analysis cycle now and show its selection",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				cy, err := c.client.RunAnalysis(c.ctx())
				return show(c, cy, err, c.printCycle)
			},
		},
		c.analysisHistoryCmd(),
	)
	return cmd
}

func (c *ctl) analysisSetCmd() *cobra.Command {
	var (
		enabled, criteria, interval, window, budget string
		metrics                                     []string
	)
	set := &cobra.Command{
		Use:   "set [--enabled on|off] [--criteria FILTER] [--interval D] [--window D] [--budget RATE] [--metric criterion=metric]...",
		Short: "Change the analysis settings; settings not given stay",
		Example: `  tigris ctl analysis set --enabled on --criteria '(more frequent ∪ most expensive) ∩ least changeable'
  tigris ctl analysis set --interval 30s --metric expensive=mean-time`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ch adminclient.AnalysisChange
			f := cmd.Flags()
			if f.Changed("enabled") {
				on, err := settings.ParseBool(enabled)
				if err != nil {
					return fmt.Errorf("analysis set: --enabled: %w", err)
				}
				ch.Enabled = &on
			}
			if f.Changed("criteria") {
				ch.Criteria = &criteria
			}
			if f.Changed("interval") {
				ch.Interval = &interval
			}
			if f.Changed("window") {
				ch.Window = &window
			}
			if f.Changed("budget") {
				b, err := settings.ParsePercent(budget)
				if err != nil {
					return fmt.Errorf("analysis set: --budget: %w", err)
				}
				ch.Budget = &b
			}
			for _, kv := range metrics {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" || v == "" {
					return fmt.Errorf("analysis set: --metric %q: want criterion=metric, e.g. expensive=mean-time", kv)
				}
				if ch.Metrics == nil {
					ch.Metrics = map[string]string{}
				}
				ch.Metrics[k] = v
			}
			if ch.Empty() {
				return errors.New("analysis set: nothing to change (give --enabled, --criteria, --interval, --window, --budget or --metric)")
			}
			a, err := c.client.SetAnalysis(c.ctx(), ch)
			return show(c, a, err, c.printAnalysis)
		},
	}
	sf := set.Flags()
	sf.StringVar(&enabled, "enabled", "", "run the analysis loop: on or off")
	sf.StringVar(&criteria, "criteria", "", "TigrisDSL relevance filter")
	sf.StringVar(&interval, "interval", "", "time between cycles, e.g. 2m")
	sf.StringVar(&window, "window", "", "history the statistics cover, e.g. 10m (0: one interval)")
	sf.StringVar(&budget, "budget", "", "overhead budget, e.g. 2% (0: none)")
	sf.StringArrayVar(&metrics, "metric", nil, "bind a criterion to a metric, criterion=metric (repeatable)")
	return set
}

func (c *ctl) analysisHistoryCmd() *cobra.Command {
	var last int
	history := &cobra.Command{
		Use:   "history [--last N]",
		Short: "Show the recent analysis cycles, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cycles, err := c.client.History(c.ctx())
			return show(c, &cycles, err, func(*[]adminclient.Cycle) error {
				if last > 0 && last < len(cycles) {
					cycles = cycles[len(cycles)-last:]
				}
				rows := make([]string, len(cycles))
				for i, cy := range cycles {
					rows[i] = fmt.Sprintf("%d\t%s\t%s\t%d\t%d\t+%d -%d\t%s\t%s", cy.Seq, cy.At.Local().Format(time.TimeOnly), cy.Trigger,
						cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), human.Percent(cy.Sampling), cy.Err)
				}
				return c.table("SEQ\tAT\tTRIGGER\tCANDIDATES\tSELECTED\tCHANGE\tSAMPLING\tERROR", rows)
			})
		},
	}
	history.Flags().IntVar(&last, "last", 0, "show only the last N cycles (0: all)")
	return history
}

func (c *ctl) printAnalysis(a *settings.Analysis) error {
	on := "off"
	if a.Enabled {
		on = "on"
	}
	rows := []string{
		"enabled\t" + on,
		"criteria\t" + a.Criteria,
		"interval\t" + a.Interval.String(),
		"window\t" + a.Window.String(),
		"budget\t" + settings.FormatPercent(a.Budget),
	}
	for _, k := range sorted.Keys(a.Metrics) {
		rows = append(rows, "metric "+k+"\t"+a.Metrics[k])
	}
	return c.table("SETTING\tVALUE", rows)
}

func (c *ctl) printCycle(cy *adminclient.Cycle) error {
	if err := c.printf("cycle %d (%s): %d candidates, %d selected (+%d -%d), sampling %s\ncriteria: %s\n",
		cy.Seq, cy.Trigger, cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), human.Percent(cy.Sampling), cy.Criteria); err != nil {
		return err
	}
	if cy.Budget != nil {
		if err := c.printf("%s\n", cy.Budget.Reason()); err != nil {
			return err
		}
	}
	if cy.Why != "" {
		return c.printf("%s\n", cy.Why)
	}
	rows := make([]string, len(cy.Selected))
	for i, s := range cy.Selected {
		rows[i] = s + "\t" + strings.Join(cy.Reasons[s], "; ")
	}
	return c.table("SELECTED\tWHY", rows)
}
