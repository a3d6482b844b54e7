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

// loop runs for the life of the program from the first Register (the monitor
// starts it). While analysis is disabled it only waits for SetAnalysis.
// Run is the analysis loop, for the life of the program. Generated probe
// tables pass it to the monitor as monitor.Links.Analyzer, which runs it on a
// goroutine of its own at the first probe registration; while analysis is
// disabled it only waits for SetAnalysis.
func Run() { loop() }

func loop() {
	for {
		an.mu.Lock()
		a, gen := confLocked().settings, an.gen
		if a.Enabled && a.Budget > 0 && an.cost == nil {
			c := monitor.MeasureFineCost() // off the init path: this is the analyzer goroutine
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
	t := now()
	if !markAt(gen, t) { // the first cycles' windows start here at the latest
		return
	}
	next := t + i
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
		if t := now(); next <= t {
			next = t + i // a slow cycle or a suspended machine: skip, don't bunch
		}
	}
}

// sleepUntil waits until the instant at, or for a settings change; it reports
// false on a change.
func sleepUntil(t *time.Timer, at int64) bool {
	d := time.Duration(at - now())
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
	addMarkLocked(mark{at: at, taken: now(), c: monitor.ReadCounters()})
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
		monitor.Report(fmt.Errorf("analysis: %s", c.Err))
	}
	return true
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
