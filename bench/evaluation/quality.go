package evaluation

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/offline"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The quality of the live selections, judged against the ground truth: what
// the offline analyzer (tigris analyze, package offline) selects with the
// same filter and metrics from a complete fine trace of the same workload,
// seen as the live analyzer sees it: one analysis window at a time.
//
// The window matters. The metrics depend on the span they are computed over:
// a function that returns a growing number (an inserted row's id) has a
// result-size spread that grows with the span, and a whole run also holds the
// service's start-up (seeding the database: functions no window of the load
// calls). Over a whole run the expanded filter selected the inserts, which no
// one-second window of the same trace selects; the live selections agreed
// with the windows, not with the run.

// truthWindows is the least number of analysis windows a truth run measures:
// its measured window lasts at least this many intervals, so that the
// consensus of its windows is a majority of several.
const truthWindows = 5

// metricBinding is metricsEnv's binding, for the offline analyzer.
var metricBinding = map[string]string{"frequent": "count", "expensive": "mean-time", "changeable": "result-size-sd"}

// TruthWindow is the offline analyzer's selection over one window of a truth
// run's trace.
type TruthWindow struct {
	From time.Time `json:"from"`
	// Selected are the functions each filter (keyed by its text) selects,
	// sorted; Candidates the functions that ran in the window.
	Selected   map[string][]string `json:"selected"`
	Candidates int                 `json:"candidates"`
}

// groundTruth reads the trace file at path and returns, for each of the
// plan's two filters (keyed by its text), the ground truth: the functions the
// offline analyzer selects in more than half of the analysis windows of the
// trace between from and to (the truth run's measured window), each window as
// long as the live analyzer's (the plan's interval; the configurations'
// TIGRIS_WINDOW is 0s, one interval). It also returns every window's
// selections and how many functions ran in the windows.
func groundTruth(path string, p Plan, from, to time.Time) (map[string][]string, []TruthWindow, int, error) {
	wins, err := offline.AggregateTraceWindows(path, from, to, time.Duration(p.Interval))
	if err != nil {
		return nil, nil, 0, err
	}
	if len(wins) == 0 {
		return nil, nil, 0, fmt.Errorf("ground truth: no complete analysis window of %s between %s and %s",
			time.Duration(p.Interval), from.Format(time.StampMilli), to.Format(time.StampMilli))
	}
	truth := map[string][]string{}
	var windows []TruthWindow
	called := map[string]bool{}
	for i, stats := range wins {
		tw := TruthWindow{From: from.Add(time.Duration(i) * time.Duration(p.Interval)), Selected: map[string][]string{}}
		for _, filter := range []string{p.Restricted, p.Expanded} {
			ev, err := analyzer.Evaluate(stats, settings.Analysis{Criteria: filter, Metrics: metricBinding})
			if err != nil {
				return nil, nil, 0, err
			}
			sel := []string{}
			for _, s := range ev.Selected() {
				sel = append(sel, s.Signature)
			}
			slices.Sort(sel)
			tw.Selected[filter] = sel
			tw.Candidates = len(ev.Candidates)
			for _, s := range ev.Candidates {
				called[s.Signature] = true
			}
		}
		windows = append(windows, tw)
	}
	for _, filter := range []string{p.Restricted, p.Expanded} {
		truth[filter] = consensus(windows, filter)
	}
	return truth, windows, len(called), nil
}

// consensus is the functions filter selects in more than half of windows,
// sorted.
func consensus(windows []TruthWindow, filter string) []string {
	votes := map[string]int{}
	for _, w := range windows {
		for _, f := range w.Selected[filter] {
			votes[f]++
		}
	}
	out := []string{}
	for f, n := range votes {
		if 2*n > len(windows) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// truthAgreement is how well a truth run's own windows match its consensus
// for filter: the mean precision and recall of their selections against it,
// the best the live selections can expect to reach on the same load (1 and 1
// when every window selected the same).
func truthAgreement(windows []TruthWindow, filter string, truth []string) (precision, recall float64) {
	if len(windows) == 0 {
		return 1, 1
	}
	for _, w := range windows {
		p, r := precisionRecall(w.Selected[filter], truth)
		precision, recall = precision+p, recall+r
	}
	return precision / float64(len(windows)), recall / float64(len(windows))
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
// under the load of the given patterns (none: the steady load of all three)
// in round run, else in the earliest round that has one.
func truthFor(sum *Summary, filter string, patterns []string, run int) ([]string, bool) {
	key := strings.Join(patterns, ",")
	var found *RunResult
	for _, c := range sum.Plan.Configs {
		if c.Kind != KindTruth || strings.Join(c.Patterns, ",") != key {
			continue
		}
		for i, r := range sum.Runs {
			if r.Config != c.Name || r.Truth == nil {
				continue
			}
			if r.Run == run {
				found = &sum.Runs[i]
				break
			}
			if found == nil || r.Run < found.Run {
				found = &sum.Runs[i]
			}
		}
		break
	}
	if found == nil {
		return nil, false
	}
	t, ok := found.Truth[filter]
	return t, ok
}

// Quality is how well a configuration's live selections matched the ground
// truth: the means over every cycle of the measured windows.
type Quality struct {
	// Truth is the ground truth's selection (short names) in the first
	// round; each run is judged against its own round's truth.
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
	first, ok := truthFor(sum, c.Filter, c.Patterns, 1)
	if !ok {
		return q, false
	}
	var then []string
	if c.Kind == KindShift {
		if then, ok = truthFor(sum, c.Filter, c.Then, 1); !ok {
			return q, false
		}
		q.TruthThen = mapSlice(then, shortSig)
	}
	q.Truth = mapSlice(first, shortSig)
	var pSum, rSum, jSum float64
	pairs := 0
	for _, r := range sum.Runs {
		if r.Config != c.Name {
			continue
		}
		truth, _ := truthFor(sum, c.Filter, c.Patterns, r.Run)
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
