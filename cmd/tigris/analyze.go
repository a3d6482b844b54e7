package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
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
			o.criteriaSet = cmd.Flags().Changed("criteria")
			if err := runAnalyze(cmd.OutOrStdout(), args[0], o); err != nil {
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
	criteria    string
	criteriaSet bool
	metrics     []string
	config      string
}

func runAnalyze(out io.Writer, path string, o analyzeOptions) error {
	a, err := analyzeSettings(o)
	if err != nil {
		return err
	}
	in, err := loadAnalyzeInput(path)
	if err != nil {
		return err
	}
	ev, err := analyzer.Evaluate(in.stats, a)
	if err != nil {
		return err
	}
	if in.trace {
		for _, c := range ev.Filter.Criteria() {
			if m := ev.Binding[c]; dsl.Metrics[m].Static {
				return fmt.Errorf("%s: criterion %q uses the static metric %q, which trace files do not carry (analyze a statistics snapshot, or bind another metric with --metric)", path, c, m)
			}
		}
	}
	printAnalysis(out, in, ev)
	return nil
}

// analyzeSettings builds the filter and binding from the flags over tigris.yaml.
func analyzeSettings(o analyzeOptions) (settings.Analysis, error) {
	a := settings.Default().Analysis
	path := cmp.Or(o.config, os.Getenv("TIGRIS_CONFIG"))
	if path == "" {
		dir, err := os.Getwd()
		if err != nil {
			return a, err
		}
		path, err = config.Find(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return a, err
		}
	}
	if path != "" {
		cfg, err := config.Load(path)
		if err != nil {
			return a, err
		}
		a = cfg.Runtime.Analysis
	}
	a.Metrics = maps.Clone(a.Metrics)
	if a.Metrics == nil {
		a.Metrics = map[string]string{}
	}
	if o.criteriaSet {
		a.Criteria = o.criteria
	}
	for _, flag := range o.metrics {
		for _, item := range strings.Split(flag, ",") {
			crit, metric, ok := strings.Cut(strings.TrimSpace(item), "=")
			crit, metric = strings.TrimSpace(crit), strings.TrimSpace(metric)
			if !ok || crit == "" || metric == "" {
				return a, fmt.Errorf("--metric %q: want criterion=metric, e.g. expensive=mean-time", item)
			}
			a.Metrics[crit] = metric
		}
	}
	return a, nil
}

// analyzeInput is the statistics to analyze and where they came from.
type analyzeInput struct {
	path  string
	trace bool
	stats []monitor.Stats
}

// loadAnalyzeInput reads a snapshot (JSON: the first non-blank byte is [ or {)
// or a trace file (anything else).
func loadAnalyzeInput(path string) (analyzeInput, error) {
	in := analyzeInput{path: path}
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if t := bytes.TrimLeft(head[:n], " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		data, err := os.ReadFile(path)
		if err != nil {
			return in, err
		}
		in.stats, err = decodeSnapshot(data)
		if err != nil {
			return in, fmt.Errorf("%s: %w", path, err)
		}
		return in, nil
	}
	in.trace = true
	in.stats, err = aggregateTrace(path)
	return in, err
}

// decodeSnapshot decodes []monitor.Stats or {"stats": [...]}. A snapshot from a
// monitor without the "sized" field has its result sizes taken as known when they
// are not zero. Missing or repeated ids are renumbered.
func decodeSnapshot(data []byte) ([]monitor.Stats, error) {
	var raw []json.RawMessage
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		var obj struct {
			Stats []json.RawMessage `json:"stats"`
		}
		if err := json.Unmarshal(t, &obj); err != nil {
			return nil, fmt.Errorf("decoding the statistics snapshot: %w", err)
		}
		if obj.Stats == nil {
			return nil, errors.New(`no "stats" array (want the JSON of GET /tigris/v1/stats: an array of statistics or {"stats": [...]})`)
		}
		raw = obj.Stats
	} else if err := json.Unmarshal(t, &raw); err != nil {
		return nil, fmt.Errorf("decoding the statistics snapshot: %w", err)
	}
	stats := make([]monitor.Stats, len(raw))
	seen := map[uint32]bool{}
	renumber := false
	for i, r := range raw {
		var presence struct {
			Sized *uint64 `json:"sized"`
		}
		if err := json.Unmarshal(r, &stats[i]); err != nil {
			return nil, fmt.Errorf("statistics entry %d: %w", i, err)
		}
		_ = json.Unmarshal(r, &presence)
		s := &stats[i]
		if presence.Sized == nil && (s.ResultSizeMean != 0 || s.ResultSizeSD != 0) {
			s.Sized = s.Count
		}
		if s.Signature == "" {
			s.Signature = fmt.Sprintf("probe %d", s.ID)
		}
		renumber = renumber || s.ID == 0 || seen[s.ID]
		seen[s.ID] = true
	}
	if renumber {
		for i := range stats {
			stats[i].ID = uint32(i + 1)
		}
	}
	return stats, nil
}

// moments is a Welford accumulator.
type moments struct{ n, mean, m2 float64 }

func (m *moments) add(x float64) {
	m.n++
	d := x - m.mean
	m.mean += d / m.n
	m.m2 += d * (x - m.mean)
}

func (m *moments) sd() float64 {
	if m.n < 2 {
		return 0
	}
	return math.Sqrt(m.m2 / (m.n - 1))
}

// aggregateTrace turns a trace file's records into per-probe statistics, as the
// monitor's coarse statistics would have counted the recorded calls. Damage is
// skipped as the reader does; the span is from the first entry to the last exit.
func aggregateTrace(path string) ([]monitor.Stats, error) {
	r, err := writer.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type acc struct {
		time, size   moments
		errs, panics uint64
		def          *writer.ProbeDef
	}
	byID := map[uint32]*acc{}
	get := func(id uint32) *acc {
		a := byID[id]
		if a == nil {
			a = &acc{}
			byID[id] = a
		}
		return a
	}
	var from, to int64 = math.MaxInt64, math.MinInt64
	for item, err := range r.All() {
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		switch item.Kind {
		case writer.KindProbe:
			get(item.Probe.ID).def = item.Probe
		case writer.KindRecord:
			rec := &item.Record
			a := get(rec.Probe)
			a.time.add(float64(rec.TOut - rec.TIn))
			if rec.Flags&writer.FlagError != 0 {
				a.errs++
			}
			if rec.Flags&writer.FlagPanic != 0 {
				a.panics++
			}
			if rec.Flags&writer.FlagSize != 0 {
				a.size.add(float64(rec.Size))
			}
			from, to = min(from, rec.TIn), max(to, rec.TOut)
		}
	}
	span := float64(to - from)
	var out []monitor.Stats
	for id, a := range byID {
		s := monitor.Stats{
			ID: id, Signature: fmt.Sprintf("probe %d", id), Count: uint64(a.time.n),
			MeanNs: a.time.mean, StdDevNs: a.time.sd(), Errors: a.errs, Panics: a.panics,
			ResultSizeMean: a.size.mean, ResultSizeSD: a.size.sd(), Sized: uint64(a.size.n),
		}
		if a.def != nil {
			s.Signature = a.def.Signature
		}
		if s.Count > 0 && span > 0 {
			s.InterArrivalNs = span / float64(s.Count)
			s.Concurrency = float64(s.Count) / span * s.MeanNs
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b monitor.Stats) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// printAnalysis writes each criterion's partitions, then the selection with the
// reasons.
func printAnalysis(out io.Writer, in analyzeInput, ev *analyzer.Evaluation) {
	kind := "statistics snapshot"
	if in.trace {
		kind = "trace file, sampled calls only"
	}
	fmt.Fprintf(out, "criteria: %s\n", ev.Filter)
	fmt.Fprintf(out, "input:    %s (%s): %d functions, %d called\n", in.path, kind, len(in.stats), len(ev.Candidates))
	for _, p := range ev.Partitions() {
		fmt.Fprintf(out, "\n%s: metric %s (%s), %s; %s\n", p.Criterion, p.Metric,
			strings.ReplaceAll(p.Direction.String(), "-", " "), p.Method, p.Normality.Reason)
		if p.Method == dsl.MethodNormal || p.Method == dsl.MethodQuantiles {
			cuts := make([]string, len(p.Cuts))
			for i, c := range p.Cuts {
				cuts[i] = analyzer.FormatMetric(c.Value)
			}
			fmt.Fprintf(out, "  cuts (%s): %s\n", p.Metric, strings.Join(cuts, " | "))
		}
		g := ev.Result.Grouping(p.Criterion)
		order := make([]int, len(ev.Candidates))
		values := make([]float64, len(ev.Candidates))
		for i := range order {
			order[i] = i
			values[i], _ = analyzer.Metric(&ev.Candidates[i], p.Metric)
		}
		// Most first; within a partition by value in the criterion's direction.
		slices.SortStableFunc(order, func(i, j int) int {
			if c := cmp.Compare(g.Levels[j], g.Levels[i]); c != 0 {
				return c
			}
			if c := cmp.Compare(values[j], values[i]) * int(p.Direction); c != 0 {
				return c
			}
			return strings.Compare(ev.Candidates[i].Signature, ev.Candidates[j].Signature)
		})
		width := 0
		for _, v := range values {
			width = max(width, len(analyzer.FormatMetric(v)))
		}
		for _, i := range order {
			fmt.Fprintf(out, "  %-7s  %*s  %s\n", levelWord(g.Levels[i]), width, analyzer.FormatMetric(values[i]), ev.Candidates[i].Signature)
		}
	}
	sel := ev.Selected()
	fmt.Fprintf(out, "\nselected: %d of %d\n", len(sel), len(ev.Candidates))
	if ev.Result.Why != "" {
		fmt.Fprintf(out, "  %s\n", ev.Result.Why)
	}
	for _, s := range sel {
		fmt.Fprintf(out, "  %s\n", s.Signature)
		for _, r := range ev.Reasons(s.ID) {
			fmt.Fprintf(out, "      %s\n", r)
		}
	}
}

// levelWord names a level as the filter words do; an unknown value has none.
func levelWord(l dsl.Level) string {
	if !l.Valid() {
		return "unknown"
	}
	return l.String()
}
