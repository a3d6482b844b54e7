package dash

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The analyzer's state as the page shows it, from a live program's cycles or
// from an evaluation of a trace.

// cycleView turns an analysis cycle into what the page shows.
func cycleView(c *analyzer.Cycle, parts []analyzer.Partition) Cycle {
	v := Cycle{
		Seq: c.Seq, At: c.At, Trigger: c.Trigger, Window: human.Duration(time.Duration(c.Window)),
		Took: human.Duration(time.Duration(c.Took)), Candidates: c.Candidates,
		Selected: c.Selected, Added: c.Added, Removed: c.Removed, Reasons: c.Reasons,
		Why: c.Why, Err: c.Err, Sampling: human.Percent(c.Sampling),
	}
	if b := c.Budget; b != nil {
		v.Budget = b.Reason()
	}
	for _, p := range parts {
		v.Partitions = append(v.Partitions, partitionView(p))
	}
	return v
}

// partitionView puts a grouping in the criterion's order: a metric where
// higher is less of the criterion (result-size-sd for changeable) has its
// groups and cuts reversed.
func partitionView(p analyzer.Partition) Partition {
	v := Partition{
		Criterion: p.Criterion, Metric: p.Metric, Direction: p.Direction.String(),
		Method: p.Method.String(), N: p.N, Excluded: p.Excluded, Counts: p.Counts,
	}
	if p.Method == dsl.MethodNormal || p.Method == dsl.MethodQuantiles {
		for _, c := range p.Cuts {
			v.Cuts = append(v.Cuts, analyzer.FormatMetric(p.Metric, c.Value))
		}
	}
	if p.Direction == dsl.HigherIsLess {
		slices.Reverse(v.Counts[:])
		slices.Reverse(v.Cuts)
	}
	return v
}

// timeline lays the selections of cycles (newest first) out as a grid,
// oldest cycle first, functions in the order they were first selected: the
// maxTimelineRows selected most often (the first selected among equals),
// More counting the others.
func timeline(cycles []Cycle) Timeline {
	var t Timeline
	row := map[string]int{}
	var times []int
	for i := len(cycles) - 1; i >= 0; i-- {
		c := &cycles[i]
		t.Cycles = append(t.Cycles, c.Seq)
		for _, s := range c.Selected {
			r, ok := row[s]
			if !ok {
				r = len(t.Rows)
				row[s] = r
				t.Rows = append(t.Rows, s)
				times = append(times, 0)
			}
			times[r]++
		}
	}
	if len(t.Rows) > maxTimelineRows {
		order := make([]int, len(t.Rows))
		for r := range order {
			order[r] = r
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(times[b], times[a]) })
		order = order[:maxTimelineRows]
		slices.Sort(order)
		kept := make([]string, len(order))
		for k, r := range order {
			kept[k] = t.Rows[r]
		}
		t.More = len(t.Rows) - len(kept)
		t.Rows = kept
		row = map[string]int{}
		for k, s := range kept {
			row[s] = k
		}
	}
	t.Cells = make([][]bool, len(t.Rows))
	for r := range t.Cells {
		t.Cells[r] = make([]bool, len(t.Cycles))
	}
	for i := len(cycles) - 1; i >= 0; i-- {
		col := len(cycles) - 1 - i
		for _, s := range cycles[i].Selected {
			if r, ok := row[s]; ok {
				t.Cells[r][col] = true
			}
		}
	}
	return t
}

// metricsOf lists the binding of the filter's criteria, then the others.
func metricsOf(a settings.Analysis) []KV {
	var crit []string
	if f, err := dsl.Parse(a.Criteria); err == nil {
		crit = f.Criteria()
	}
	var out []KV
	for _, c := range crit {
		out = append(out, KV{c, a.Metrics[c]})
	}
	return out
}

// phase says in one line which phase the analyzer is in, from its settings,
// its latest cycle and how many probes are fine.
func phase(enabled bool, interval time.Duration, last *Cycle, fine int, now time.Time) (string, string) {
	if !enabled {
		if fine > 0 {
			return "Analysis off", fmt.Sprintf("%d probe(s) fine by rules; no cycle runs on its own (Run a cycle now, or turn analysis on)", fine)
		}
		return "Analysis off", "modes follow the rules only; no cycle runs on its own"
	}
	next := ""
	if last != nil && interval > 0 {
		if d := last.At.Add(interval).Sub(now); d > 0 {
			next = fmt.Sprintf("; next cycle in %s", d.Round(time.Second))
		}
	}
	switch {
	case last == nil:
		return "Phase 1: coarse statistics", "every function is measured cheaply; the first cycle picks what to trace" + next
	case last.Err != "":
		return "Phase 2 held", "the last cycle failed, the previous selection stays: " + last.Err + next
	case len(last.Selected) == 0:
		return "Phase 1: coarse statistics", "cycle " + fmt.Sprint(last.Seq) + " selected nothing" + next
	}
	return "Phase 2: fine tracing", fmt.Sprintf("%d function(s) selected by cycle %d traced in detail, sampled at %s%s",
		len(last.Selected), last.Seq, last.Sampling, next)
}

// staticCriteria names the criteria bound to metrics a trace does not carry.
func staticCriteria(a settings.Analysis) []string {
	f, err := dsl.Parse(a.Criteria)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range f.Criteria() {
		if m, ok := dsl.Metrics[a.Metrics[c]]; ok && m.Static {
			out = append(out, fmt.Sprintf("%s (%s)", c, a.Metrics[c]))
		}
	}
	return out
}

// joinOr joins names for a sentence.
func joinOr(names []string) string { return strings.Join(names, ", ") }
