package analyzer

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Cycle is the record of one analysis cycle, as History and AnalyzeNow return it
// and the admin endpoint serves it. Signatures are ProbeInfo.Signature texts.
type Cycle struct {
	Seq int       `json:"seq"`
	At  time.Time `json:"at"`
	// Criteria is the canonical text of the filter evaluated.
	Criteria string `json:"criteria"`
	// Candidates is the number of functions grouped: those that ran in the window
	// and that the configuration does not switch off.
	Candidates int `json:"candidates"`
	// Selected are the functions the filter selected, sorted; Added and Removed
	// the change from the previous cycle's selection (the paper's Table 14). After
	// a failed cycle the previous selection stays in force and Selected repeats it.
	Selected []string `json:"selected"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	// Reasons explains each selected function: its level for every criterion of
	// the filter with the metric value, e.g. "frequent: most (count 200)".
	Reasons map[string][]string `json:"reasons"`
	// Why explains an empty selection in one line: no function ran in the
	// window, or which part of the filter came out empty, why, and which
	// relaxation would select something (dsl.Result.Why). Empty when something
	// was selected or the cycle failed.
	Why string `json:"why,omitempty"`
	// Sampling is the sampling rate in force after the cycle (budget applied).
	Sampling float64 `json:"sampling"`
	Err      string  `json:"error,omitempty"`

	// Trigger is "interval" for the loop's cycles and "manual" for AnalyzeNow.
	Trigger string `json:"trigger"`
	// Window is the span of time the statistics covered.
	Window settings.Duration `json:"window"`
	// Took is how long the cycle computed.
	Took settings.Duration `json:"took"`
	// Partitions holds the grouping of each criterion of the filter.
	Partitions []Partition `json:"partitions,omitempty"`
	// Overridden are candidates whose mode is not the one the analyzer chose,
	// because a manual rule matches them (manual rules win).
	Overridden []string `json:"overridden,omitempty"`
	// Budget is the budget controller's decision; nil when there is no budget.
	Budget *Budget `json:"budget,omitempty"`
}

// Partition is the grouping of one criterion's metric values in a cycle. The
// embedded dsl.Partition is in the metric's own order (Least holds the lowest
// values); with Direction higher-is-less the criterion's levels are the reverse.
type Partition struct {
	Criterion string        `json:"criterion"`
	Metric    string        `json:"metric"`
	Direction dsl.Direction `json:"direction"`
	dsl.Partition
}

// runCycleLocked is one analysis cycle. Called with an.mu held.
// at is the cycle's instant (scheduled, for the loop).
func runCycleLocked(trigger string, at int64) (c Cycle) {
	began := time.Now()
	conf := confLocked()
	an.seq++
	c = Cycle{Seq: an.seq, At: clock(), Trigger: trigger, Reasons: map[string][]string{}}
	defer func() { // completes both the result and the history entry
		c.Took = settings.Duration(time.Since(began))
		// Empty lists encode as [], not null: clients index them without checks.
		for _, l := range []*[]string{&c.Selected, &c.Added, &c.Removed} {
			if *l == nil {
				*l = []string{}
			}
		}
		an.history = append(an.history, c)
		if n := len(an.history); n > historyLen {
			an.history = slices.Delete(an.history, 0, n-historyLen)
		}
	}()

	t := now()
	counters := monitor.ReadCounters()
	from := windowStartLocked(at - int64(windowOf(conf.settings)))
	addMarkLocked(mark{at: at, taken: t, c: counters})
	span := time.Duration(t - from.taken)
	c.Window = settings.Duration(span)

	// Window statistics of every probe; candidates are those that ran and that
	// the configuration does not switch off.
	window := counters.Since(from.c, span)
	var cands []monitor.Stats
	for _, s := range window {
		if s.Count > 0 && !counters.Off(s.ID) {
			cands = append(cands, s)
		}
	}
	c.Candidates = len(cands)
	c.Criteria = conf.settings.Criteria
	if conf.filter != nil {
		c.Criteria = conf.filter.String()
	}
	fail := func(err error) Cycle {
		c.Err = err.Error()
		c.Selected = slices.Sorted(maps.Values(an.selected))
		c.Sampling = monitor.EffectiveSampling()
		return c
	}
	if conf.err != nil {
		return fail(conf.err)
	}
	ev, err := evaluate(cands, conf.filter, conf.binding)
	if err != nil {
		return fail(err)
	}
	c.Partitions = ev.Partitions()
	c.Why = ev.Result.Why
	if len(cands) == 0 {
		c.Why = quietWhy(window, counters, span)
	}

	// The new selection: selected candidates fine, other candidates coarse; probes
	// that did not run fall back to the rules.
	choice := make(map[uint32]monitor.Mode, len(cands))
	for _, s := range cands {
		choice[s.ID] = settings.Coarse
	}
	selected := make(map[uint32]string, len(ev.Result.Selected))
	for _, s := range ev.Selected() {
		choice[s.ID] = settings.Fine
		selected[s.ID] = s.Signature
		c.Reasons[s.Signature] = ev.Reasons(s.ID)
	}
	c.Selected = slices.Sorted(maps.Values(selected))
	for id, sig := range selected {
		if _, ok := an.selected[id]; !ok {
			c.Added = append(c.Added, sig)
		}
	}
	for id, sig := range an.selected {
		if _, ok := selected[id]; !ok {
			c.Removed = append(c.Removed, sig)
		}
	}
	sort.Strings(c.Added)
	sort.Strings(c.Removed)
	an.selected = selected

	if err := applyLocked(&c, conf, window, choice, span, t); err != nil {
		return fail(err)
	}
	return c
}

// applyLocked installs the analyzer's choice and runs the budget controller,
// which the monitor calls back with the probes that are fine after the switch.
// Called with an.mu held.
func applyLocked(c *Cycle, conf *analysisConf, window []monitor.Stats, choice map[uint32]monitor.Mode, span time.Duration, t int64) error {
	var limit func(fine []uint32, configured, previous float64) monitor.SamplingLimit
	records := monitor.FineRecords()
	if budget := conf.settings.Budget; budget > 0 {
		if an.cost == nil {
			cost := monitor.MeasureFineCost() // AnalyzeNow before the loop calibrated
			an.cost = &cost
		}
		cost := *an.cost
		limit = func(fine []uint32, configured, previous float64) monitor.SamplingLimit {
			var calls float64
			for _, id := range fine {
				if i := int(id) - 1; i >= 0 && i < len(window) && span > 0 {
					calls += float64(window[i].Count) / span.Seconds()
				}
			}
			b := decideSampling(budgetInput{
				budget: budget, cost: cost, procs: procs(), callsPerSec: calls,
				configured: configured, previous: previous,
			})
			if an.recAt != 0 && t > an.recAt {
				b.RecordsPerSec = float64(records-an.records) / (float64(t-an.recAt) / 1e9)
			}
			c.Budget = &b
			return monitor.SamplingLimit{Cap: b.Rate, Reason: b.Reason()}
		}
	}
	applied, err := monitor.SetAnalyzerModes(choice, limit)
	if err != nil {
		return err
	}
	an.choice = choice
	an.records, an.recAt = records, t
	for _, id := range applied.Overridden {
		if i := int(id) - 1; i >= 0 && i < len(window) {
			c.Overridden = append(c.Overridden, window[i].Signature)
		}
	}
	sort.Strings(c.Overridden)
	c.Sampling = applied.Sampling
	return nil
}

// quietWhy explains a cycle without candidates.
func quietWhy(window []monitor.Stats, counters monitor.Counters, span time.Duration) string {
	ran, off := 0, 0
	for _, s := range window {
		if s.Count > 0 {
			ran++
			if counters.Off(s.ID) {
				off++
			}
		}
	}
	why := fmt.Sprintf("nothing qualified: no monitored function completed a call in the window (%v, %d probes)", span.Round(time.Millisecond), counters.Len())
	if off > 0 {
		why += fmt.Sprintf("; %d that ran are off by the configuration, which the analyzer never turns on", off)
	}
	return why
}
