package main

import (
	"cmp"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/offline"
	"github.com/tigrisgo/tigris/runtime/settings"
)

const analyzeHelp = `analyze runs the analyzer's grouping and selection offline, on a saved
statistics snapshot or a trace file, and explains the result: for every criterion
of the filter, which partition (least, less, plain, more, most) each function
falls in, then the functions the filter selects and why.

FILE is one of
  - a statistics snapshot: the JSON the admin endpoint serves at
    GET /tigris/v1/stats (an array of statistics, or an object with a "stats"
    array), e.g. curl -s localhost:7070/tigris/v1/stats > stats.json;
  - a trace file (.tgr, with its rotated successors): the fine records are
    aggregated per function into counts, mean times, errors, panics and result
    sizes. A trace holds only the sampled calls of functions that were fine, so
    counts are sampled counts; it has result sizes only when the program ran
    with summaries on (TIGRIS_SUMMARIES=on); and it carries no static metrics
    (cyclomatic, statements, params).

The filter is --criteria, else analysis.criteria of tigris.yaml (--config, else
$TIGRIS_CONFIG, else found upward from the current directory), else the default
filter. --metric binds a criterion to a metric over tigris.yaml's bindings.
docs/analysis.md lists the metrics; docs/dsl.md explains the grouping.`

func newAnalyzeCmd() *cobra.Command {
	var o analyzeOptions
	cmd := &cobra.Command{
		Use:   "analyze [--criteria FILTER] [--metric CRITERION=METRIC]... FILE",
		Short: "Show how a statistics snapshot or trace groups and what the filter selects",
		Long:  analyzeHelp,
		Example: `  tigris analyze stats.json
  tigris analyze --criteria 'most expensive ∪ more error-prone' stats.json
  tigris analyze --metric error-prone=error-rate tigris-out/app-4711.tgr`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := runAnalyze(cmd, args[0], o); err != nil {
				return fmt.Errorf("analyze: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.criteria, "criteria", "", "TigrisDSL filter (default: tigris.yaml's, else the built-in default)")
	cmd.Flags().StringArrayVar(&o.metrics, "metric", nil, "bind a criterion to a metric, e.g. expensive=mean-time (repeatable, or comma-separated)")
	cmd.Flags().StringVar(&o.config, "config", "", "tigris.yaml to take the filter and bindings from")
	return cmd
}

type analyzeOptions struct {
	criteria string
	metrics  []string
	config   string
}

// runAnalyze hands the flags to package offline.
func runAnalyze(cmd *cobra.Command, path string, o analyzeOptions) error {
	a, err := analysisSettings(cmd, o)
	if err != nil {
		return err
	}
	return offline.Run(cmd.OutOrStdout(), path, a)
}

// analysisSettings are the analysis settings the flags ask for (tigris
// analyze, tigris dash on a trace): the file is --config, else
// $TIGRIS_CONFIG, else found upward; the filter is --criteria when given.
func analysisSettings(cmd *cobra.Command, o analyzeOptions) (settings.Analysis, error) {
	opt := offline.Options{Config: cmp.Or(o.config, os.Getenv("TIGRIS_CONFIG")), Metrics: map[string]string{}}
	if cmd.Flags().Changed("criteria") {
		opt.Criteria = &o.criteria
	}
	for _, flag := range o.metrics {
		for _, item := range strings.Split(flag, ",") {
			crit, metric, ok := strings.Cut(strings.TrimSpace(item), "=")
			crit, metric = strings.TrimSpace(crit), strings.TrimSpace(metric)
			if !ok || crit == "" || metric == "" {
				return settings.Analysis{}, fmt.Errorf("--metric %q: want criterion=metric, e.g. expensive=mean-time", item)
			}
			opt.Metrics[crit] = metric
		}
	}
	return offline.Settings(opt)
}
