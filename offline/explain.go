package offline

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Run loads the statistics at path (see Load), evaluates a on them and writes
// the explanation (see Explain) to out. A filter that needs a static metric
// fails on a trace file, which carries none, rather than group nothing.
func Run(out io.Writer, path string, a settings.Analysis) error {
	in, err := Load(path)
	if err != nil {
		return err
	}
	ev, err := analyzer.Evaluate(in.Stats, a)
	if err != nil {
		return err
	}
	if in.Trace {
		for _, c := range ev.Filter.Criteria() {
			if m := ev.Binding[c]; dsl.Metrics[m].Static {
				return fmt.Errorf("%s: criterion %q uses the static metric %q, which trace files do not carry (analyze a statistics snapshot, or bind another metric with --metric)", path, c, m)
			}
		}
	}
	Explain(out, in, ev)
	return nil
}

// Explain writes each criterion's partitions, every candidate in its
// partition with its metric value, then the selection with the reasons.
func Explain(out io.Writer, in Input, ev *analyzer.Evaluation) {
	kind := "statistics snapshot"
	if in.Trace {
		kind = "trace file, sampled calls only"
	}
	fmt.Fprintf(out, "criteria: %s\n", ev.Filter)
	fmt.Fprintf(out, "input:    %s (%s): %d functions, %d called\n", in.Path, kind, len(in.Stats), len(ev.Candidates))
	for _, p := range ev.Partitions() {
		fmt.Fprintf(out, "\n%s: metric %s (%s), %s; %s\n", p.Criterion, p.Metric,
			strings.ReplaceAll(p.Direction.String(), "-", " "), p.Method, p.Normality.Reason)
		if p.Method == dsl.MethodNormal || p.Method == dsl.MethodQuantiles {
			cuts := make([]string, len(p.Cuts))
			for i, c := range p.Cuts {
				cuts[i] = analyzer.FormatMetric(p.Metric, c.Value)
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
			width = max(width, utf8.RuneCountInString(analyzer.FormatMetric(p.Metric, v)))
		}
		for _, i := range order {
			v := analyzer.FormatMetric(p.Metric, values[i])
			fmt.Fprintf(out, "  %-7s  %s%s  %s\n", levelWord(g.Levels[i]), strings.Repeat(" ", width-utf8.RuneCountInString(v)), v, ev.Candidates[i].Signature)
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
