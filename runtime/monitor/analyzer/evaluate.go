package analyzer

import (
	"fmt"
	"math"
	"slices"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Evaluation is the outcome of evaluating a filter over statistics (Evaluate).
// Candidates[i] is the candidate with id Result.IDs[i].
type Evaluation struct {
	Filter     *dsl.Filter
	Binding    dsl.Binding
	Candidates []monitor.Stats
	Result     *dsl.Result
}

// Evaluate evaluates a's criteria with a's metric binding (merged over the
// default binding) over stats, as an analysis cycle does: the candidates are the
// entries with Count > 0. The ids must be distinct. Only Criteria and Metrics of
// a are read. tigris analyze uses it on a saved snapshot.
func Evaluate(stats []monitor.Stats, a settings.Analysis) (*Evaluation, error) {
	f, b, err := compileCriteria(a)
	if err != nil {
		return nil, err
	}
	var cands []monitor.Stats
	for _, s := range stats {
		if s.Count > 0 {
			cands = append(cands, s)
		}
	}
	return evaluate(cands, f, b)
}

func evaluate(cands []monitor.Stats, f *dsl.Filter, b dsl.Binding) (*Evaluation, error) {
	cs := dsl.Candidates{IDs: make([]uint32, len(cands)), Values: map[string][]float64{}}
	for i, s := range cands {
		cs.IDs[i] = s.ID
	}
	for _, crit := range f.Criteria() {
		m := b[crit]
		if _, done := cs.Values[m]; done {
			continue
		}
		col := make([]float64, len(cands))
		for i := range cands {
			v, ok := Metric(&cands[i], m)
			if !ok {
				return nil, fmt.Errorf("metric %q of criterion %q: the monitor does not compute it", m, crit)
			}
			col[i] = v
		}
		cs.Values[m] = col
	}
	res, err := dsl.Evaluate(f, cs, b)
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", f, err)
	}
	return &Evaluation{Filter: f, Binding: b, Candidates: cands, Result: res}, nil
}

// Selected returns the selected candidates, by ascending id.
func (e *Evaluation) Selected() []monitor.Stats {
	out := make([]monitor.Stats, 0, len(e.Result.Selected))
	for _, id := range e.Result.Selected {
		if i := slices.Index(e.Result.IDs, id); i >= 0 {
			out = append(out, e.Candidates[i])
		}
	}
	return out
}

// Reasons explains candidate id: for every criterion of the filter, its level and
// the metric value, e.g. "frequent: most (count 200)"; "unknown" when the value
// was not known.
func (e *Evaluation) Reasons(id uint32) []string {
	i := slices.Index(e.Result.IDs, id)
	if i < 0 {
		return nil
	}
	out := make([]string, 0, len(e.Result.Groupings))
	for _, g := range e.Result.Groupings {
		v, _ := Metric(&e.Candidates[i], g.Metric)
		out = append(out, fmt.Sprintf("%s: %s (%s %s)", g.Criterion, g.Levels[i], g.Metric, FormatMetric(g.Metric, v)))
	}
	return out
}

// Partitions returns each criterion's grouping, in the order of Filter.Criteria.
func (e *Evaluation) Partitions() []Partition {
	out := make([]Partition, len(e.Result.Groupings))
	for i, g := range e.Result.Groupings {
		out[i] = Partition{Criterion: g.Criterion, Metric: g.Metric, Direction: g.Direction, Partition: g.Partition}
	}
	return out
}

// FormatMetric prints a value of the named metric for people, with three
// significant digits and its unit: mean-time 271µs, error-rate 1.5%, count
// 1657 or 1.37M; "unknown" for NaN.
func FormatMetric(metric string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "unknown"
	case dsl.Metrics[metric].Unit == dsl.UnitNs:
		return settings.HumanNs(v)
	case dsl.Metrics[metric].Unit == dsl.UnitShare:
		return settings.HumanPercent(v)
	}
	return settings.HumanNum(v)
}

// Metric returns the value of the named metric (a key of dsl.Metrics) for s, and
// false for a name the monitor does not compute. A value that is not known is
// NaN, which keeps the function out of that criterion's partitions: the time
// metrics of a function that never completed a call, the result-size spread of
// one that never reported a size, a cyclomatic complexity the build did not
// compute (0; every function has at least 1).
func Metric(s *monitor.Stats, name string) (float64, bool) {
	nan := math.NaN()
	ran := s.Count > 0
	pick := func(known bool, v float64) (float64, bool) {
		if !known {
			return nan, true
		}
		return v, true
	}
	switch name {
	case "count":
		return float64(s.Count), true
	case "inter-arrival":
		return pick(ran && s.InterArrivalNs > 0, s.InterArrivalNs)
	case "mean-time":
		return pick(ran, s.MeanNs)
	case "errors":
		return float64(s.Errors), true
	case "error-rate":
		return pick(ran, float64(s.Errors)/float64(s.Count))
	case "panics":
		return float64(s.Panics), true
	case "concurrency":
		return pick(ran && s.InterArrivalNs > 0, s.Concurrency)
	case "result-size-sd":
		return pick(s.Sized > 0, s.ResultSizeSD)
	case "cyclomatic":
		return pick(s.Cyclomatic > 0, float64(s.Cyclomatic))
	case "statements":
		return float64(s.Statements), true
	case "params":
		return float64(s.Params), true
	}
	return nan, false
}
