package monitor

import (
	"errors"
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The analyzer is the second phase of the paper's two-phase monitoring: every
// interval it groups the coarse statistics of the functions that ran in the window,
// evaluates the TigrisDSL filter, and switches the selected functions to fine mode
// and the others back to coarse through the analyzer layer of the mode rules
// (registry.analyzer), so manual rules still win. docs/analysis.md is the user's
// description; this file is the implementation.

// historyLen is how many cycles History keeps: the paper's Table 14 shows a handful
// of cycles, and a hundred cover hours at the default interval.
const historyLen = 100

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

// an is the analyzer's state. mu serialises cycles (the loop's and AnalyzeNow's)
// and SetAnalysis; it is taken before registry.mu, never after.
var an struct {
	mu       sync.Mutex
	conf     *analysisConf     // compiled registry.cfg.Analysis; nil until first needed
	seq      int               // last cycle's Seq
	history  []Cycle           // oldest first, at most historyLen
	selected map[uint32]string // probe id → signature of the selection in force
	marks    []mark            // statistics at past instants, oldest first
	cost     *FineCost         // calibrated on first need
	gen      int               // bumped by SetAnalysis: the loop's schedule is stale
	records  uint64            // fineRecords at the previous cycle
	recAt    int64             // nanotime of the previous cycle
}

// anWake tells the loop that the settings changed: it re-reads them and restarts
// its timer. One pending signal is enough.
var anWake = make(chan struct{}, 1)

// analysisConf is a validated, compiled settings.Analysis.
type analysisConf struct {
	settings settings.Analysis
	filter   *dsl.Filter // nil when the criteria are empty
	binding  dsl.Binding
	err      error // why the configured criteria cannot be evaluated
}

// compileCriteria parses a's criteria and binds its metrics, merged over
// dsl.DefaultBinding (as tigris.yaml's analysis.metrics are). Parse errors keep
// the participle position, "analysis.criteria: 1:17: unknown criterion ...".
func compileCriteria(a settings.Analysis) (*dsl.Filter, dsl.Binding, error) {
	b := dsl.DefaultBinding()
	maps.Copy(b, a.Metrics)
	if strings.TrimSpace(a.Criteria) == "" {
		return nil, b, errors.New("analysis.criteria: empty filter (want e.g. (more frequent ∪ most expensive) ∩ least changeable)")
	}
	f, err := dsl.Parse(a.Criteria)
	if err != nil {
		return nil, b, fmt.Errorf("analysis.criteria: %w", err)
	}
	if err := b.Validate(f); err != nil {
		return nil, b, fmt.Errorf("analysis.metrics: %w", err)
	}
	return f, b, nil
}

// compileAnalysis checks a completely: the settings' own rules, then the criteria
// and the binding. Empty criteria are accepted while analysis is disabled.
func compileAnalysis(a settings.Analysis) (*analysisConf, error) {
	r := settings.Default()
	r.Analysis = a
	if err := r.Validate(); err != nil {
		return nil, err
	}
	c := &analysisConf{settings: a}
	c.filter, c.binding, c.err = compileCriteria(a)
	c.settings.Metrics = map[string]string(c.binding)
	if c.err != nil && (a.Enabled || strings.TrimSpace(a.Criteria) != "") {
		return nil, c.err
	}
	return c, nil
}

// confLocked returns the compiled analysis settings, compiling the configured ones
// on first use. Settings that came from TIGRIS_* variables were never parsed as
// TigrisDSL: a bad filter there is kept as conf.err, reported by every cycle.
// Called with an.mu held.
func confLocked() *analysisConf {
	if an.conf == nil {
		registry.mu.Lock()
		a := registry.cfg.Analysis
		registry.mu.Unlock()
		c := &analysisConf{settings: a}
		c.filter, c.binding, c.err = compileCriteria(a)
		c.settings.Metrics = map[string]string(c.binding)
		an.conf = c
	}
	return an.conf
}

// Analysis returns the analysis settings in force, with the metric binding
// complete (defaults merged). Before the first probe registers they are the
// defaults. Safe for concurrent use.
func Analysis() settings.Analysis {
	registry.mu.Lock()
	configured := registry.configured
	registry.mu.Unlock()
	if !configured {
		return settings.Default().Analysis
	}
	an.mu.Lock()
	defer an.mu.Unlock()
	a := confLocked().settings
	a.Metrics = maps.Clone(a.Metrics)
	return a
}

// SetAnalysis replaces the analysis settings: it validates a (the criteria parse,
// with the column of an error, and every criterion has a known metric; a.Metrics
// is merged over the default binding), applies it and restarts the loop's timer,
// so the next cycle comes one interval from now. An invalid a changes nothing.
// Disabling analysis hands every probe back to the rules (the analyzer's choices
// are dropped) and lifts the budget's limit on sampling. It waits for a running
// cycle to finish. Safe for concurrent use.
func SetAnalysis(a settings.Analysis) error {
	c, err := compileAnalysis(a)
	if err != nil {
		return fmt.Errorf("analysis settings: %w", err)
	}
	an.mu.Lock()
	defer an.mu.Unlock()
	registry.mu.Lock()
	if !registry.configured {
		registry.mu.Unlock()
		return errors.New("analysis settings: no probes registered yet")
	}
	registry.cfg.Analysis = c.settings
	if !a.Enabled {
		registry.analyzer = nil
		reevaluate()
		an.selected = nil
	}
	if !a.Enabled || a.Budget == 0 {
		samplingCap = 0
		applySamplingLocked()
	}
	registry.mu.Unlock()
	an.conf = c
	an.gen++
	select {
	case anWake <- struct{}{}:
	default:
	}
	return nil
}

// AnalyzeNow runs one cycle at once, whether or not analysis is enabled, applies
// its selection and returns it (it is also appended to History). Its window is
// the configured one, like the loop's. The error is the cycle's Err.
func AnalyzeNow() (_ Cycle, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("analyze: internal error: %v", r)
			report(err)
		}
	}()
	registry.mu.Lock()
	configured := registry.configured
	registry.mu.Unlock()
	if !configured {
		return Cycle{}, errors.New("analyze: no probes registered yet")
	}
	an.mu.Lock()
	defer an.mu.Unlock()
	c := runCycleLocked("manual", nanotime())
	if c.Err != "" {
		return c.clone(), errors.New(c.Err)
	}
	return c.clone(), nil
}

// History returns the recent cycles, oldest first (at most 100). The values are
// copies the caller may keep and change.
func History() []Cycle {
	an.mu.Lock()
	defer an.mu.Unlock()
	out := make([]Cycle, len(an.history))
	for i := range an.history {
		out[i] = an.history[i].clone()
	}
	return out
}

func (c Cycle) clone() Cycle {
	c.Selected = slices.Clone(c.Selected)
	c.Added = slices.Clone(c.Added)
	c.Removed = slices.Clone(c.Removed)
	c.Overridden = slices.Clone(c.Overridden)
	c.Partitions = slices.Clone(c.Partitions)
	if c.Reasons != nil {
		r := make(map[string][]string, len(c.Reasons))
		for k, v := range c.Reasons {
			r[k] = slices.Clone(v)
		}
		c.Reasons = r
	}
	if c.Budget != nil {
		b := *c.Budget
		c.Budget = &b
	}
	return c
}

// analyzerLoop runs for the life of the program from the first Register. While
// analysis is disabled it only waits for SetAnalysis.
func analyzerLoop() {
	defer recoverInternal("analyzer")
	for {
		an.mu.Lock()
		a, gen := confLocked().settings, an.gen
		if a.Enabled && a.Budget > 0 && an.cost == nil {
			c := calibrate() // off the init path: this is the analyzer goroutine
			an.cost = &c
		}
		an.mu.Unlock()
		if !a.Enabled {
			<-anWake
			continue
		}
		schedule(gen, time.Duration(a.Interval), windowOf(a))
	}
}

// windowOf is the span of statistics a cycle evaluates: the window, or one
// interval when it is 0.
func windowOf(a settings.Analysis) time.Duration {
	if a.Window > 0 {
		return time.Duration(a.Window)
	}
	return time.Duration(a.Interval)
}

// schedule runs a cycle every interval until the settings change (an.gen moves
// on). A cycle at T evaluates the statistics since T - window, so a mark is
// needed at that instant: each cycle's own mark serves a later cycle when the
// window is a multiple of the interval, and otherwise an extra mark is taken
// window mod interval before each cycle. Marks and cycles are keyed by their
// scheduled instants, so a late timer does not shift a window.
func schedule(gen int, interval, window time.Duration) {
	timer := time.NewTimer(interval)
	defer timer.Stop()
	i, offset := int64(interval), int64(window%interval)
	now := nanotime()
	if !markAt(gen, now) { // the first cycles' windows start here at the latest
		return
	}
	next := now + i
	for {
		if offset > 0 {
			if !sleepUntil(timer, next-offset) || !markAt(gen, next-offset) {
				return
			}
		}
		if !sleepUntil(timer, next) || !cycleAt(gen, next) {
			return
		}
		next += i
		if now := nanotime(); next <= now {
			next = now + i // a slow cycle or a suspended machine: skip, don't bunch
		}
	}
}

// sleepUntil waits until the monotonic instant at, or for a settings change; it
// reports false on a change.
func sleepUntil(t *time.Timer, at int64) bool {
	d := time.Duration(at - nanotime())
	if d <= 0 {
		return true
	}
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-anWake:
		return false
	}
}

// markAt records the statistics for a later cycle's window; false means the
// settings changed since generation gen was scheduled.
func markAt(gen int, at int64) (current bool) {
	current = true // after an internal panic the schedule goes on
	defer recoverInternal("analysis mark")
	an.mu.Lock()
	defer an.mu.Unlock()
	if an.gen != gen {
		return false
	}
	probes, _ := probesLocked()
	addMarkLocked(mark{at: at, taken: nanotime(), tot: totalsOf(probes)})
	return true
}

// cycleAt runs the cycle scheduled at the instant at; false means the settings
// changed since generation gen was scheduled (the cycle belongs to the old ones).
func cycleAt(gen int, at int64) (current bool) {
	current = true
	defer recoverInternal("analysis cycle")
	an.mu.Lock()
	defer an.mu.Unlock()
	if an.gen != gen {
		return false
	}
	if c := runCycleLocked("interval", at); c.Err != "" {
		report(fmt.Errorf("analysis: %s", c.Err))
	}
	return true
}

// mark is the cumulative statistics of every probe at one instant; tot[i] belongs
// to probe id i+1 (ids are assigned in registration order and never reused).
type mark struct {
	at    int64 // the instant the mark stands for (scheduled), nanotime
	taken int64 // when it was taken, nanotime
	tot   []totals
}

// probesLocked copies the probe list and tells which probes the configuration
// leaves on (the analyzer never turns on a probe the configuration turns off).
func probesLocked() ([]*Probe, []bool) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	probes := slices.Clone(registry.probes)
	on := make([]bool, len(probes))
	for i := range probes {
		on[i] = baseModeOf(i) != modeOff
	}
	return probes, on
}

func totalsOf(probes []*Probe) []totals {
	tot := make([]totals, len(probes))
	for i, p := range probes {
		tot[i] = p.stats.total()
	}
	return tot
}

// maxMarks bounds the marks kept whatever the settings did before.
const maxMarks = 40

// addMarkLocked keeps m if it is at least a sixteenth of a window after the newest
// mark, and drops the marks no later cycle can start its window at (window
// starts only move forward). That bounds memory to about 18 marks of one totals
// value per probe, whatever the window/interval ratio, at the price of a window
// start up to a sixteenth of the window early.
func addMarkLocked(m mark) {
	w := int64(windowOf(confLocked().settings))
	if n := len(an.marks); n > 0 && m.at-an.marks[n-1].at < w/16 {
		return
	}
	an.marks = append(an.marks, m)
	keep := 0 // the latest mark at or before m.at-w, where the next window may start
	for j, old := range an.marks {
		if old.at <= m.at-w {
			keep = j
		}
	}
	an.marks = an.marks[num.Max(keep, len(an.marks)-maxMarks):]
}

// windowStartLocked returns the mark a window reaching back to target starts at:
// the latest mark at or before target; while there is none yet (the analysis
// started less than a window ago) the earliest mark, a shorter window rather
// than one reaching back before the analysis; with no mark at all the program's
// start.
func windowStartLocked(target int64) mark {
	if len(an.marks) == 0 {
		return mark{at: startNanos, taken: startNanos}
	}
	best := an.marks[0]
	for _, m := range an.marks {
		if m.at <= target {
			best = m
		}
	}
	return best
}

// runCycleLocked is one analysis cycle. Called with an.mu held.
// at is the cycle's instant (scheduled, for the loop).
func runCycleLocked(trigger string, at int64) (c Cycle) {
	began := nanotime()
	conf := confLocked()
	an.seq++
	c = Cycle{Seq: an.seq, At: time.Now(), Trigger: trigger, Reasons: map[string][]string{}}
	defer func() { // completes both the result and the history entry
		c.Took = settings.Duration(nanotime() - began)
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

	probes, on := probesLocked()
	now := nanotime()
	tot := totalsOf(probes)
	from := windowStartLocked(at - int64(windowOf(conf.settings)))
	addMarkLocked(mark{at: at, taken: now, tot: tot})
	span := now - from.taken
	c.Window = settings.Duration(span)

	// Window statistics of every probe; candidates are those that ran.
	window := make([]Stats, len(probes))
	var cands []Stats
	for i, p := range probes {
		t := tot[i]
		if i < len(from.tot) {
			t = t.minus(from.tot[i])
		}
		window[i] = p.statsOf(t, float64(span))
		if on[i] && window[i].Count > 0 {
			cands = append(cands, window[i])
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
		registry.mu.Lock()
		c.Sampling = effectiveSamplingLocked()
		registry.mu.Unlock()
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

	// The new selection: selected candidates fine, other candidates coarse; probes
	// that did not run fall back to the rules.
	choice := make(map[uint32]uint32, len(cands))
	for _, s := range cands {
		choice[s.ID] = modeCoarse
	}
	selected := make(map[uint32]string, len(ev.Result.Selected))
	for _, s := range ev.Selected() {
		choice[s.ID] = modeFine
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

	cost := an.cost
	if conf.settings.Budget > 0 && cost == nil {
		cc := calibrate() // AnalyzeNow before the loop calibrated
		an.cost, cost = &cc, &cc
	}
	records := fineRecords.Load()
	applyLocked(&c, conf, cost, probes, window, choice, span, now, records)
	an.records, an.recAt = records, now
	sort.Strings(c.Overridden)
	return c
}

// applyLocked installs the analyzer's choice, re-evaluates the modes and runs the
// budget controller, all under one hold of registry.mu so the new fine probes
// start with the rate meant for them. Called with an.mu held.
func applyLocked(c *Cycle, conf *analysisConf, cost *FineCost, probes []*Probe, window []Stats,
	choice map[uint32]uint32, span, now int64, records uint64) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	// The rate in force before this cycle, read before anything resets the cap:
	// the controller raises at most twofold from it.
	previous := effectiveSamplingLocked()
	registry.analyzer = choice
	reevaluate()
	var fineCalls float64
	for i, p := range probes {
		m := p.mode.Load()
		if m == modeFine && span > 0 {
			fineCalls += float64(window[i].Count) / (float64(span) / 1e9)
		}
		if want, ok := choice[p.id]; ok && m != want {
			c.Overridden = append(c.Overridden, window[i].Signature)
		}
	}
	samplingCap = 0
	if conf.settings.Budget > 0 {
		b := decideSampling(budgetInput{
			budget: conf.settings.Budget, cost: *cost, procs: procs(), callsPerSec: fineCalls,
			configured: registry.cfg.Sampling, previous: previous,
		})
		if an.recAt != 0 && now > an.recAt {
			b.RecordsPerSec = float64(records-an.records) / (float64(now-an.recAt) / 1e9)
		}
		samplingCap = b.Rate
		c.Budget = &b
	}
	applySamplingLocked()
	c.Sampling = effectiveSamplingLocked()
}

// Evaluation is the outcome of evaluating a filter over statistics (Evaluate).
// Candidates[i] is the candidate with id Result.IDs[i].
type Evaluation struct {
	Filter     *dsl.Filter
	Binding    dsl.Binding
	Candidates []Stats
	Result     *dsl.Result
}

// Evaluate evaluates a's criteria with a's metric binding (merged over the
// default binding) over stats, as an analysis cycle does: the candidates are the
// entries with Count > 0. The ids must be distinct. Only Criteria and Metrics of
// a are read. tigris analyze uses it on a saved snapshot.
func Evaluate(stats []Stats, a settings.Analysis) (*Evaluation, error) {
	f, b, err := compileCriteria(a)
	if err != nil {
		return nil, err
	}
	var cands []Stats
	for _, s := range stats {
		if s.Count > 0 {
			cands = append(cands, s)
		}
	}
	return evaluate(cands, f, b)
}

func evaluate(cands []Stats, f *dsl.Filter, b dsl.Binding) (*Evaluation, error) {
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
			v, ok := cands[i].Metric(m)
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
func (e *Evaluation) Selected() []Stats {
	out := make([]Stats, 0, len(e.Result.Selected))
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
		v, _ := e.Candidates[i].Metric(g.Metric)
		out = append(out, fmt.Sprintf("%s: %s (%s %s)", g.Criterion, g.Levels[i], g.Metric, FormatMetric(v)))
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

// FormatMetric prints a metric value compactly: integers without a fraction,
// others with 4 significant digits, "unknown" for NaN.
func FormatMetric(v float64) string {
	switch {
	case math.IsNaN(v):
		return "unknown"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Metric returns the value of the named metric (a key of dsl.Metrics) for s, and
// false for a name the monitor does not compute. A value that is not known is
// NaN, which keeps the function out of that criterion's partitions: the time
// metrics of a function that never completed a call, the result-size spread of
// one that never reported a size, a cyclomatic complexity the build did not
// compute (0; every function has at least 1).
func (s *Stats) Metric(name string) (float64, bool) {
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
