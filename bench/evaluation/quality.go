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

// truthStrides is how many windows of a truth run start in each interval:
// one every fifth of it, so that a live cycle's window, wherever it falls,
// has a truth window within a tenth of an interval of it.
const truthStrides = 5

// metricBinding is metricsEnv's binding, for the offline analyzer.
var metricBinding = map[string]string{"frequent": "count", "expensive": "mean-time", "changeable": "result-size-sd"}

// TruthWindow is the offline analyzer's selection over one window of a truth
// run's trace.
type TruthWindow struct {
	From time.Time `json:"from"`
	// Selected are the functions each filter (keyed by its text) selects,
	// short names (shortSig), sorted; Candidates the functions that ran in
	// the window.
	Selected   map[string][]string `json:"selected"`
	Candidates int                 `json:"candidates"`
}

// groundTruth reads the trace file at path of a truth run whose measured
// window started at start and ended at end. Its windows are as long as the
// live analyzer's (the plan's interval; the configurations' TIGRIS_WINDOW is
// 0s, one interval) and start every truthStrides-th of an interval from one
// interval before start (the end of the warm-up, where the live runs' first
// cycles look) on. It returns every window's selection and, for each of the
// plan's two filters (keyed by its text), the consensus of the windows of
// the measured window: the functions selected in more than half of them;
// and how many functions ran in those windows.
func groundTruth(path string, p Plan, start, end time.Time) (map[string][]string, []TruthWindow, int, error) {
	interval := time.Duration(p.Interval)
	stride := interval / truthStrides
	wins, err := offline.AggregateTraceWindows(path, start.Add(-interval), end, interval, stride)
	if err != nil {
		return nil, nil, 0, err
	}
	votes := map[string]map[string]int{}
	measured := 0
	var windows []TruthWindow
	called := map[string]bool{}
	for i, stats := range wins {
		tw := TruthWindow{From: start.Add(time.Duration(i)*stride - interval), Selected: map[string][]string{}}
		in := !tw.From.Before(start)
		if in {
			measured++
		}
		for _, filter := range []string{p.Restricted, p.Expanded} {
			ev, err := analyzer.Evaluate(stats, settings.Analysis{Criteria: filter, Metrics: metricBinding})
			if err != nil {
				return nil, nil, 0, err
			}
			sel := []string{}
			for _, s := range ev.Selected() {
				sel = append(sel, s.Signature)
			}
			tw.Selected[filter] = mapSlice(sel, shortSig)
			slices.Sort(tw.Selected[filter])
			tw.Candidates = len(ev.Candidates)
			if !in {
				continue
			}
			if votes[filter] == nil {
				votes[filter] = map[string]int{}
			}
			for _, f := range sel {
				votes[filter][f]++
			}
			for _, s := range ev.Candidates {
				called[s.Signature] = true
			}
		}
		windows = append(windows, tw)
	}
	if measured == 0 {
		return nil, nil, 0, fmt.Errorf("ground truth: no complete analysis window of %s between %s and %s",
			interval, start.Format(time.StampMilli), end.Format(time.StampMilli))
	}
	truth := map[string][]string{}
	for _, filter := range []string{p.Restricted, p.Expanded} {
		truth[filter] = []string{}
		for f, n := range votes[filter] {
			if 2*n > measured {
				truth[filter] = append(truth[filter], f)
			}
		}
		slices.Sort(truth[filter])
	}
	return truth, windows, len(called), nil
}

// truthAgreement is how well truth run r's own windows of its measured
// window match its consensus for filter: the mean precision and recall of
// their selections against it, what a live selection that always chose the
// consensus would reach against the windows (1 and 1 when every window
// selected the same).
func truthAgreement(r *RunResult, filter string) (precision, recall float64, n int) {
	truth := mapSlice(r.Truth[filter], shortSig)
	for _, w := range r.TruthWindows {
		if w.From.Before(r.WindowStart) {
			continue
		}
		p, rc := precisionRecall(truth, w.Selected[filter])
		precision, recall, n = precision+p, recall+rc, n+1
	}
	if n == 0 {
		return 1, 1, 0
	}
	return precision / float64(n), recall / float64(n), n
}

// alignedWindow returns truth run t's window that lies where live run r's
// cycle at at looked: the window whose start is as far from t's measured
// window's start as the cycle's window (one interval before at) is from r's,
// within half a stride; nil when t has none there or either run lacks its
// window's start.
func alignedWindow(t, r *RunResult, at time.Time, interval time.Duration) *TruthWindow {
	if t == nil || t.WindowStart.IsZero() || r.WindowStart.IsZero() {
		return nil
	}
	off := at.Add(-interval).Sub(r.WindowStart)
	tol := interval / truthStrides / 2
	for i := range t.TruthWindows {
		w := &t.TruthWindows[i]
		if d := w.From.Sub(t.WindowStart) - off; d >= -tol && d <= tol {
			return w
		}
	}
	return nil
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

// truthFor finds, among the truth runs of sum, the one under the load of the
// given patterns (none: the steady load of all three) in round run, else in
// the earliest round that has one; nil when there is none.
func truthFor(sum *Summary, patterns []string, run int) *RunResult {
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
				return &sum.Runs[i]
			}
			if found == nil || r.Run < found.Run {
				found = &sum.Runs[i]
			}
		}
		break
	}
	return found
}

// Quality is how well a configuration's live selections matched the ground
// truth: the means over every cycle of the measured windows.
type Quality struct {
	// Truth is the ground truth's selection (short names) in the first
	// round: the consensus of its truth run's windows.
	Truth []string `json:"truth"`
	// Cycles is the number of cycles judged. Precision and Recall judge each
	// against the truth window of its round's truth run that lies where the
	// cycle's window did (as far from the start of the measured load, which
	// has the same seed in both: the same simulated users); Aligned cycles
	// had one, the others (and every cycle of a shift run) are judged against
	// the consensus. ConsensusPrecision and ConsensusRecall judge every cycle
	// against its round's consensus.
	Cycles             int     `json:"cycles"`
	Precision          float64 `json:"precision"`
	Recall             float64 `json:"recall"`
	Aligned            int     `json:"aligned"`
	ConsensusPrecision float64 `json:"consensusPrecision"`
	ConsensusRecall    float64 `json:"consensusRecall"`
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
	consensus := func(t *RunResult) ([]string, bool) {
		if t == nil {
			return nil, false
		}
		sel, ok := t.Truth[c.Filter]
		return mapSlice(sel, shortSig), ok
	}
	first, ok := consensus(truthFor(sum, c.Patterns, 1))
	if !ok {
		return q, false
	}
	var then []string
	if c.Kind == KindShift {
		if then, ok = consensus(truthFor(sum, c.Then, 1)); !ok {
			return q, false
		}
		q.TruthThen = then
	}
	q.Truth = first
	interval := time.Duration(sum.Plan.Interval)
	var pSum, rSum, cpSum, crSum, jSum float64
	pairs := 0
	for _, r := range sum.Runs {
		if r.Config != c.Name {
			continue
		}
		t := truthFor(sum, c.Patterns, r.Run)
		truth, _ := consensus(t)
		for i, cy := range r.Cycles {
			sel := mapSlice(cy.Functions, shortSig)
			want := truth
			if c.Kind == KindShift && !cy.At.Before(r.SwitchAt) {
				want = then
			}
			cp, crc := precisionRecall(sel, want)
			cpSum, crSum = cpSum+cp, crSum+crc
			if w := alignedWindow(t, &r, cy.At, interval); w != nil && c.Kind != KindShift {
				want = w.Selected[c.Filter]
				q.Aligned++
			}
			p, rc := precisionRecall(sel, want)
			pSum, rSum = pSum+p, rSum+rc
			q.Cycles++
			if i > 0 {
				jSum += jaccard(r.Cycles[i-1].Functions, cy.Functions)
				pairs++
			}
		}
		if c.Kind == KindShift {
			q.FollowCycles = append(q.FollowCycles, follow(r.Cycles, r.SwitchAt, first, then))
		}
	}
	if q.Cycles == 0 {
		return q, false
	}
	n := float64(q.Cycles)
	q.Precision, q.Recall = pSum/n, rSum/n
	q.ConsensusPrecision, q.ConsensusRecall = cpSum/n, crSum/n
	q.Stability = 1
	if pairs > 0 {
		q.Stability = jSum / float64(pairs)
	}
	return q, true
}

// follow counts the cycles after switchAt until the selection follows the
// switch from the first truth to then (short names): Quality.FollowCycles.
func follow(cycles []Cycle, switchAt time.Time, first, then []string) int {
	var before []string
	n := 0
	for _, cy := range cycles {
		if cy.At.Before(switchAt) {
			before = cy.Functions
			continue
		}
		n++
		sel := mapSlice(cy.Functions, shortSig)
		if !slices.Equal(cy.Functions, before) && f1(sel, then) >= f1(sel, first) {
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
