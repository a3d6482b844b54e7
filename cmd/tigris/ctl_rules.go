package main

// tigris ctl probes, rules, enable and sampling: what is switched, and how.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func (c *ctl) ctx() context.Context { return c.cmd.Context() }

func (c *ctl) probesCmd() *cobra.Command {
	var f adminclient.Filter
	cmd := &cobra.Command{
		Use:   "probes [--match POINTCUT] [--mode off|coarse|fine]",
		Short: "List the probes with their mode",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			l, err := c.client.Probes(c.ctx(), f)
			return show(c, l, err, func(l *admin.ProbeList) error {
				rows := make([]string, len(l.Probes))
				var why []string
				for i, p := range l.Probes {
					mode := string(p.Mode)
					switch {
					case p.Shed:
						// Phase 1 switched it off: the effective state.
						mode = "off (phase 1)"
						why = append(why, fmt.Sprintf("%d %s: %s", p.ID, p.Signature, p.TimingReason))
					case p.Mode == settings.Coarse && p.TimedOneIn > 1:
						// Phase 1 times one call in N: the effective state.
						mode = fmt.Sprintf("coarse 1/%d", p.TimedOneIn)
						why = append(why, fmt.Sprintf("%d %s: times one call in %d: %s", p.ID, p.Signature, p.TimedOneIn, p.TimingReason))
					}
					rows[i] = fmt.Sprintf("%d\t%s\t%s\t%s:%d", p.ID, mode, p.Signature, p.File, p.Line)
				}
				if err := c.table("ID\tMODE\tSIGNATURE\tPOSITION", rows); err != nil {
					return err
				}
				for _, w := range why {
					fmt.Fprintln(c.cmd.OutOrStdout(), w)
				}
				return nil
			})
		},
	}
	filterFlags(cmd, &f)
	return cmd
}

// filterFlags adds --match and --mode.
func filterFlags(cmd *cobra.Command, f *adminclient.Filter) {
	cmd.Flags().StringVar(&f.Pointcut, "match", "", "only probes whose function matches this pointcut")
	cmd.Flags().StringVar(&f.Mode, "mode", "", "only probes in this mode")
}

func (c *ctl) rulesCmd() *cobra.Command {
	list := func(*cobra.Command, []string) error {
		l, err := c.client.Rules(c.ctx())
		return show(c, l, err, c.printRules)
	}
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List, add, delete or replace the mode rules",
		Long: `Mode rules switch every probe whose function matches a pointcut to a mode;
the last matching rule wins. Configured rules come from tigris.yaml and
TIGRIS_RULES; manual rules, added here, come after them and win over them and
over the analyzer. "rules" alone lists them; manual rules are numbered for
"rules delete".`,
		Args: cobra.NoArgs,
		RunE: list,
	}
	var mode string
	add := &cobra.Command{
		Use:   "add POINTCUT [--mode off|coarse|fine]",
		Short: "Append a manual rule",
		Args:  cobra.ExactArgs(1),
		RunE:  func(_ *cobra.Command, args []string) error { return c.addRule(args[0], mode) },
	}
	add.Flags().StringVar(&mode, "mode", "fine", "the mode the rule sets")
	cmd.AddCommand(
		&cobra.Command{Use: "list", Short: "List the configured and manual rules", Args: cobra.NoArgs, RunE: list},
		add,
		&cobra.Command{
			Use:   "delete INDEX",
			Short: "Remove the manual rule with this index (see rules list)",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				i, err := strconv.Atoi(args[0])
				if err != nil {
					return fmt.Errorf("rules delete: %q is not an index (want 0, 1, ... as rules list numbers them)", args[0])
				}
				rc, err := c.client.DeleteRule(c.ctx(), i)
				return show(c, rc, err, func(rc *admin.RuleChange) error {
					return c.printf("deleted rule %d: %s %s\n", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
				})
			},
		},
		&cobra.Command{
			Use:   "set RULE... | none",
			Short: "Replace all manual rules (each RULE is mode:pointcut)",
			Example: `  tigris ctl rules set 'fine:execution(* shop/repo.*(..))' 'off:execution(* shop/repo.Ping(..))'
  tigris ctl rules set none`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				rules := []settings.Rule{}
				for _, a := range args {
					rs, err := settings.ParseRules(a)
					if err != nil {
						return fmt.Errorf("rules set: %w", err)
					}
					rules = append(rules, rs...)
				}
				l, err := c.client.SetRules(c.ctx(), rules)
				return show(c, l, err, c.printRules)
			},
		},
	)
	return cmd
}

func (c *ctl) addRule(pattern, mode string) error {
	rc, err := c.client.AddRule(c.ctx(), settings.Rule{Pattern: pattern, Mode: settings.Mode(mode)})
	return show(c, rc, err, func(rc *admin.RuleChange) error {
		return c.printf("added rule %d: %s %s\n", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
	})
}

func (c *ctl) printRules(l *admin.RuleList) error {
	var rows []string
	for _, r := range l.Configured {
		rows = append(rows, fmt.Sprintf("config\t%s\t%s", r.Mode, r.Pattern))
	}
	for i, r := range l.Manual {
		rows = append(rows, fmt.Sprintf("%d\t%s\t%s", i, r.Mode, r.Pattern))
	}
	return c.table("#\tMODE\tPATTERN", rows)
}

// enableCmd switches functions to fine in one step: a rule and, if given, the
// sampling rate (docs/admin-api.md, "tigris ctl").
func (c *ctl) enableCmd() *cobra.Command {
	var mode, sampling string
	cmd := &cobra.Command{
		Use:   "enable POINTCUT [--mode fine] [--sampling RATE]",
		Short: "Switch the matching probes to a mode (rules add, then sampling set)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if sampling != "" {
				// Checked first, so a bad rate adds no rule.
				if _, err := settings.ParsePercent(sampling); err != nil {
					return fmt.Errorf("enable: --sampling: %w", err)
				}
			}
			if err := c.addRule(args[0], mode); err != nil || sampling == "" {
				return err
			}
			return c.setSampling(sampling)
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "fine", "the mode to switch to")
	cmd.Flags().StringVar(&sampling, "sampling", "", "also set the sampling rate, e.g. 10%")
	return cmd
}

func (c *ctl) samplingCmd() *cobra.Command {
	get := func(*cobra.Command, []string) error {
		s, err := c.client.Sampling(c.ctx())
		return show(c, s, err, c.printSampling)
	}
	cmd := &cobra.Command{
		Use:   "sampling",
		Short: "Show or set the share of fine-mode traces recorded",
		Args:  cobra.NoArgs,
		RunE:  get,
	}
	cmd.AddCommand(
		&cobra.Command{Use: "get", Short: "Show the sampling rate", Args: cobra.NoArgs, RunE: get},
		&cobra.Command{
			Use:     "set RATE",
			Short:   "Set the sampling rate: a percentage (10%) or a fraction (0.1)",
			Example: "  tigris ctl sampling set 10%",
			Args:    cobra.ExactArgs(1),
			RunE:    func(_ *cobra.Command, args []string) error { return c.setSampling(args[0]) },
		},
	)
	return cmd
}

func (c *ctl) setSampling(rate string) error {
	s, err := c.client.SetSampling(c.ctx(), rate)
	return show(c, s, err, c.printSampling)
}

func (c *ctl) printSampling(s *admin.SamplingState) error {
	return c.printf("sampling %s%s\n", s.Percent, inForce(s.Sampling, s.Effective, s.Reason))
}

// inForce says which rate is in force while an overhead budget is set, and
// why: " configured, 0.5% in force: overhead budget 1% of CPU: ...". The
// configured rate is as set; the one in force, worked out, is rounded.
func inForce(configured, effective float64, reason string) string {
	switch {
	case reason == "":
		return ""
	case effective == configured:
		return " (" + reason + ")"
	}
	return " configured, " + human.Percent(effective) + " in force: " + reason
}
