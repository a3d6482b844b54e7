package evaluation

import (
	"slices"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/offline"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The quality of the live selections, judged against the ground truth: what
// the offline analyzer (tigris analyze, package offline) selects with the
// same filter and metrics from a complete fine trace of the same workload.

// metricBinding is metricsEnv's binding, for the offline analyzer.
var metricBinding = map[string]string{"frequent": "count", "expensive": "mean-time", "changeable": "result-size-sd"}

// groundTruth aggregates the trace file at path as tigris analyze does and
// returns, for each of the plan's two filters (keyed by its text), the
// functions it selects, sorted, and how many functions the trace called.
func groundTruth(path string, p Plan) (map[string][]string, int, error) {
	stats, err := offline.AggregateTrace(path)
	if err != nil {
		return nil, 0, err
	}
	truth := map[string][]string{}
	called := 0
	for _, filter := range []string{p.Restricted, p.Expanded} {
		ev, err := analyzer.Evaluate(stats, settings.Analysis{Criteria: filter, Metrics: metricBinding})
		if err != nil {
			return nil, 0, err
		}
		sel := []string{}
		for _, s := range ev.Selected() {
			sel = append(sel, s.Signature)
		}
		slices.Sort(sel)
		truth[filter] = sel
		called = len(ev.Candidates)
	}
	return truth, called, nil
}

// precisionRecall of a selection against the truth: the share of selected
// functions the truth selects (1 for an empty selection: nothing selected
// wrongly) and the share of the truth selected (1 for an empty truth).
func precisionRecall(selected, truth []string) (precision, recall float64) {
	both := 0
	for _, f := range selected {
		if slices.Contains(truth, f) {
			both++
		}
	}
	precision, recall = 1, 1
	if len(selected) > 0 {
		precision = float64(both) / float64(len(selected))
	}
	if len(truth) > 0 {
		recall = float64(both) / float64(len(truth))
	}
	return precision, recall
}

// jaccard is |a ∩ b| / |a ∪ b|, 1 when both are empty.
func jaccard(a, b []string) float64 {
	both := 0
	for _, f := range a {
		if slices.Contains(b, f) {
			both++
		}
	}
	union := len(a) + len(b) - both
	if union == 0 {
		return 1
	}
	return float64(both) / float64(union)
}

// truthFor finds, among the truth runs of sum, the ground truth of filter
// under the load of the given patterns (none: the steady load of all three).
func truthFor(sum *Summary, filter string, patterns []string) ([]string, bool) {
	key := strings.Join(patterns, ",")
	for _, c := range sum.Plan.Configs {
		if c.Kind != KindTruth || strings.Join(c.Patterns, ",") != key {
			continue
		}
		for _, r := range sum.Runs {
			if r.Config == c.Name && r.Truth != nil {
				t, ok := r.Truth[filter]
				return t, ok
			}
		}
	}
	return nil, false
}

// Quality is how well a configuration's live selections matched the ground
// truth: the means over every cycle of the measured windows.
type Quality struct {
	// Truth is the ground truth's selection (short names).
	Truth []string `json:"truth"`
	// Cycles is the number of cycles judged.
	Cycles    int     `json:"cycles"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	// Stability is the mean Jaccard similarity of consecutive cycles'
	// selections: 1 when every cycle selected the same.
	Stability float64 `json:"stability"`
	// For a shift configuration: FollowCycles are, per run, the cycles after
	// the switch of navigation pattern until the selection follows: the first
	// cycle whose selection differs from the one before the switch and
	// matches the second pattern's truth at least as well as the first's
	// (F1, the harmonic mean of precision and recall); 1 is the first cycle
	// after the switch, 0 means none did. Precision and recall judge each
	// cycle against the truth of the pattern it ran under: from the switch
	// on TruthThen, the second pattern's.
	FollowCycles []int    `json:"followCycles,omitempty"`
	TruthThen    []string `json:"truthThen,omitempty"`
}

// judge computes c's Quality from its runs in sum; ok is false when sum
// holds no ground truth for c's filter.
func judge(sum *Summary, c Config) (q Quality, ok bool) {
	if !c.TwoPhase() || c.Scope != ScopeModule {
		return q, false
	}
	truth, ok := truthFor(sum, c.Filter, c.Patterns)
	if !ok {
		return q, false
	}
	var then []string
	if c.Kind == KindShift {
		if then, ok = truthFor(sum, c.Filter, c.Then); !ok {
			return q, false
		}
		q.TruthThen = mapSlice(then, shortSig)
	}
	q.Truth = mapSlice(truth, shortSig)
	var pSum, rSum, jSum float64
	pairs := 0
	for _, r := range sum.Runs {
		if r.Config != c.Name {
			continue
		}
		for i, cy := range r.Cycles {
			want := truth
			if c.Kind == KindShift && !cy.At.Before(r.SwitchAt) {
				want = then
			}
			p, rc := precisionRecall(cy.Functions, want)
			pSum, rSum = pSum+p, rSum+rc
			q.Cycles++
			if i > 0 {
				jSum += jaccard(r.Cycles[i-1].Functions, cy.Functions)
				pairs++
			}
		}
		if c.Kind == KindShift {
			q.FollowCycles = append(q.FollowCycles, follow(r.Cycles, r.SwitchAt, truth, then))
		}
	}
	if q.Cycles == 0 {
		return q, false
	}
	q.Precision, q.Recall = pSum/float64(q.Cycles), rSum/float64(q.Cycles)
	q.Stability = 1
	if pairs > 0 {
		q.Stability = jSum / float64(pairs)
	}
	return q, true
}

// follow counts the cycles after switchAt until the selection follows the
// switch from the first truth to then: Quality.FollowCycles.
func follow(cycles []Cycle, switchAt time.Time, first, then []string) int {
	var before []string
	n := 0
	for _, cy := range cycles {
		if cy.At.Before(switchAt) {
			before = cy.Functions
			continue
		}
		n++
		if !slices.Equal(cy.Functions, before) && f1(cy.Functions, then) >= f1(cy.Functions, first) {
			return n
		}
	}
	return 0
}

// f1 is the harmonic mean of precisionRecall's precision and recall, 0 when
// both are.
func f1(selected, truth []string) float64 {
	p, r := precisionRecall(selected, truth)
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}
