package analyzer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// historyLen is how many cycles History keeps: the paper's Table 14 shows a handful
// of cycles, and a hundred cover hours at the default interval.
const historyLen = 100

// an is the analyzer's state. mu serialises cycles (the loop's and AnalyzeNow's)
// and SetAnalysis; it is taken before the monitor's lock, never while the
// monitor calls back.
var an struct {
	mu       sync.Mutex
	conf     *analysisConf           // compiled settings; nil until first needed
	seq      int                     // last cycle's Seq
	history  []Cycle                 // oldest first, at most historyLen
	selected map[uint32]string       // probe id → signature of the selection in force
	marks    []mark                  // statistics at past instants, oldest first
	cost     *monitor.FineCost       // calibrated on first need
	gen      int                     // bumped by SetAnalysis: the loop's schedule is stale
	choice   map[uint32]monitor.Mode // the analyzer layer in force
	records  uint64                  // monitor.FineRecords at the previous cycle
	recAt    int64                   // instant of the previous cycle
}

// clock is the analyzer's time source; tests replace it to run many cycles
// over simulated seconds. Instants are nanoseconds since monitor.Started.
var clock = time.Now

func now() int64 { return clock().Sub(monitor.Started()).Nanoseconds() }

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

// compile compiles a without checking it: a bad filter is kept as err.
func compile(a settings.Analysis) *analysisConf {
	c := &analysisConf{settings: a}
	c.filter, c.binding, c.err = compileCriteria(a)
	c.settings.Metrics = map[string]string(c.binding)
	return c
}

// compileAnalysis checks a completely: the settings' own rules, then the criteria
// and the binding. Empty criteria are accepted while analysis is disabled.
func compileAnalysis(a settings.Analysis) (*analysisConf, error) {
	r := settings.Default()
	r.Analysis = a
	if err := r.Validate(); err != nil {
		return nil, err
	}
	c := compile(a)
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
		a, _ := monitor.ConfiguredAnalysis()
		an.conf = compile(a)
	}
	return an.conf
}

// Analysis returns the analysis settings in force, with the metric binding
// complete (defaults merged). Before the first probe registers they are the
// defaults. Safe for concurrent use.
func Analysis() settings.Analysis {
	if _, configured := monitor.ConfiguredAnalysis(); !configured {
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
// are dropped) and lifts the budget's limit on sampling; so does a budget of 0.
// It waits for a running cycle to finish. Safe for concurrent use.
func SetAnalysis(a settings.Analysis) error {
	c, err := compileAnalysis(a)
	if err != nil {
		return fmt.Errorf("analysis settings: %w", err)
	}
	if _, configured := monitor.ConfiguredAnalysis(); !configured {
		return errors.New("analysis settings: no probes registered yet")
	}
	an.mu.Lock()
	defer an.mu.Unlock()
	switch {
	case !a.Enabled:
		if _, err := monitor.SetAnalyzerModes(nil, nil); err != nil {
			return fmt.Errorf("analysis settings: %w", err)
		}
		an.selected, an.choice = nil, nil
	case a.Budget == 0:
		if _, err := monitor.SetAnalyzerModes(an.choice, nil); err != nil {
			return fmt.Errorf("analysis settings: %w", err)
		}
	}
	an.conf = c
	an.gen++
	rescheduleLocked()
	return nil
}

// AnalyzeNow runs one cycle at once, whether or not analysis is enabled, applies
// its selection and returns it (it is also appended to History). Its window is
// the configured one, like the loop's. The error is the cycle's Err.
func AnalyzeNow() (_ Cycle, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("analyze: internal error: %v", r)
			monitor.Report(err)
		}
	}()
	if _, configured := monitor.ConfiguredAnalysis(); !configured {
		return Cycle{}, errors.New("analyze: no probes registered yet")
	}
	an.mu.Lock()
	defer an.mu.Unlock()
	c := runCycleLocked("manual", now())
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

// Run starts the analysis schedule. Generated probe tables pass it to the
// monitor as monitor.Links.Analyzer, which calls it once, off the init path,
// at the first probe registration.
//
// The schedule runs on a timer (time.AfterFunc): between cycles no goroutine
// of the analyzer exists, and while analysis is disabled not even a timer, so
// a program's own goroutine-leak checks (goleak at the end of a test, say)
// never see it.
func Run() {
	an.mu.Lock()
	defer an.mu.Unlock()
	sched.started = true
	rescheduleLocked()
}

// sched is the analysis schedule. Guarded by an.mu.
var sched struct {
	started  bool        // Run was called: the binary runs the analyzer
	timer    *time.Timer // of the current generation; nil while disabled
	gen      int         // an.gen the timer belongs to
	step     int         // what the timer's next fire does
	next     int64       // the instant of the next cycle
	interval int64
	offset   int64 // window mod interval: an extra mark that long before each cycle
}

// The steps of the schedule.
const (
	stepStart = iota // calibrate the fine cost if needed, mark now
	stepMark         // the extra mark before the cycle at next
	stepCycle        // the cycle at next
)

// rescheduleLocked drops the current schedule and, when analysis is enabled,
// starts one from the settings in force: a cycle every interval from now. A
// cycle at T evaluates the statistics since T - window, so a mark is needed at
// that instant: each cycle's own mark serves a later cycle when the window is
// a multiple of the interval, and otherwise an extra mark is taken window mod
// interval before each cycle. Marks and cycles are keyed by their scheduled
// instants, so a late timer does not shift a window. Called with an.mu held.
func rescheduleLocked() {
	if sched.timer != nil {
		sched.timer.Stop() // a fire already waiting for an.mu finds its generation stale
		sched.timer = nil
	}
	if !sched.started {
		return
	}
	if an.conf == nil {
		// Not compiled yet: a disabled analysis needs no criteria, whose
		// parsing builds the filter grammar (most of a millisecond at start).
		if a, _ := monitor.ConfiguredAnalysis(); !a.Enabled {
			return
		}
	}
	a := confLocked().settings
	if !a.Enabled {
		return
	}
	gen := an.gen
	sched.gen, sched.step = gen, stepStart
	sched.interval, sched.offset = int64(a.Interval), int64(windowOf(a)%time.Duration(a.Interval))
	// The first step calibrates, which takes a while: on the timer's goroutine,
	// not on SetAnalysis's caller.
	sched.timer = time.AfterFunc(0, func() { fire(gen) })
}

// fire runs the schedule's step due now and arms the timer for the next one;
// a fire of an older generation (the settings changed since) does nothing.
func fire(gen int) {
	an.mu.Lock()
	defer an.mu.Unlock()
	if !sched.started || gen != an.gen || gen != sched.gen || sched.timer == nil {
		return
	}
	step(confLocked().settings) // after an internal panic the schedule goes on
	if t := now(); sched.step == stepCycle && sched.next <= t {
		sched.next = t + sched.interval // a slow cycle or a suspended machine: skip, don't bunch
	}
	at := sched.next
	if sched.offset > 0 && sched.step != stepMark {
		sched.step, at = stepMark, sched.next-sched.offset
	} else {
		sched.step = stepCycle
	}
	d := time.Duration(at - now())
	if d < 0 {
		d = 0
	}
	sched.timer.Reset(d)
}

// step runs sched.step. Called with an.mu held.
func step(a settings.Analysis) {
	defer recoverInternal("analysis")
	switch sched.step {
	case stepStart:
		if a.Budget > 0 && an.cost == nil {
			c := monitor.MeasureFineCost()
			an.cost = &c
		}
		t := now()
		sched.next = t + sched.interval
		addMarkLocked(mark{at: t, taken: t, c: monitor.ReadCounters()}) // the first windows start here at the latest
	case stepMark:
		addMarkLocked(mark{at: sched.next - sched.offset, taken: now(), c: monitor.ReadCounters()})
	case stepCycle:
		at := sched.next
		sched.next += sched.interval // first: a panicking cycle must not repeat at once
		if c := runCycleLocked("interval", at); c.Err != "" {
			monitor.Report(fmt.Errorf("analysis: %s", c.Err))
		}
	}
}

// recoverInternal keeps a panic inside the analyzer from reaching the program.
func recoverInternal(where string) {
	if r := recover(); r != nil {
		monitor.Report(fmt.Errorf("internal error in %s: %v", where, r))
	}
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
