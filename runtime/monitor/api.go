package monitor

import (
	"fmt"
	"math"
	"sort"

	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Rule is a run-time mode rule: every probe whose function matches Pattern (a
// pointcut expression such as "execution(* example.com/shop/repo.*(..))") gets Mode.
type Rule = settings.Rule

// Mode is a probe mode: "off", "coarse" or "fine".
type Mode = settings.Mode

// AddRule appends a manual rule; it wins over earlier rules, the analyzer and the
// configuration. It returns the rule's index. An invalid pattern or mode changes
// nothing and returns an error with the column.
func AddRule(r Rule) (int, error) {
	rs, err := compileRules([]settings.Rule{r})
	if err != nil {
		return 0, err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.manual = append(registry.manual, rs...)
	reevaluate()
	return len(registry.manual) - 1, nil
}

// SetRules replaces all manual rules at once (nil clears them).
func SetRules(rules []Rule) error {
	rs, err := compileRules(rules)
	if err != nil {
		return err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.manual = rs
	reevaluate()
	return nil
}

// DeleteRule removes the manual rule at index i.
func DeleteRule(i int) error {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if i < 0 || i >= len(registry.manual) {
		return fmt.Errorf("no rule %d (have %d)", i, len(registry.manual))
	}
	registry.manual = append(registry.manual[:i:i], registry.manual[i+1:]...)
	reevaluate()
	return nil
}

// Rules returns the configured rules followed by the manual ones, in evaluation
// order (the last match wins).
func Rules() (configured, manual []Rule) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, r := range registry.base {
		configured = append(configured, r.Rule)
	}
	for _, r := range registry.manual {
		manual = append(manual, r.Rule)
	}
	return configured, manual
}

// SetSampling sets the share of fine-mode traces recorded: 0, or
// settings.MinRate to 1 (settings.CheckSampling, the rule of tigris.yaml and
// TIGRIS_SAMPLING).
func SetSampling(rate float64) error {
	if err := settings.CheckSampling(rate); err != nil {
		return err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	setSamplingLocked(rate)
	return nil
}

func setSamplingLocked(rate float64) {
	registry.cfg.Sampling = rate
	applySamplingLocked()
}

// Sampling returns the configured sampling rate. The rate in force may be lower
// while the overhead budget limits it (EffectiveSampling).
func Sampling() float64 {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.cfg.Sampling
}

// ProbeStatus describes one probe for listings.
type ProbeStatus struct {
	ID        uint32        `json:"id"`
	Signature string        `json:"signature"`
	File      string        `json:"file"`
	Line      int           `json:"line"`
	Mode      settings.Mode `json:"mode"`
	// TimedOneIn, Shed and TimingReason: see Stats.
	TimedOneIn   uint32 `json:"timedOneIn"`
	Shed         bool   `json:"shed,omitempty"`
	TimingReason string `json:"timingReason,omitempty"`
}

// Probes lists the probes whose function matches filter (nil: all), by id.
func Probes(filter *pointcut.Pointcut) []ProbeStatus {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	var out []ProbeStatus
	for _, p := range registry.probes {
		if filter != nil {
			if sig := p.info().signature(); !filter.MatchExecution(&sig) {
				continue
			}
		}
		in := p.info()
		out = append(out, ProbeStatus{
			ID: p.id, Signature: in.Signature(), File: in.File, Line: in.Line,
			Mode: modeName(p.mode.Load()), TimedOneIn: p.timing.Load() + 1, Shed: shedByPhase1(p), TimingReason: p.timingReason(),
		})
	}
	return out
}

// Stats are one probe's coarse statistics over some span of time.
type Stats struct {
	ID        uint32        `json:"id"`
	Signature string        `json:"signature"`
	Mode      settings.Mode `json:"mode"`
	// Count is the number of calls: every call, or, while phase 1 times
	// one call in N (TimedOneIn), the timed calls and N-1 for each.
	Count uint64 `json:"count"`
	// Timed is the number of calls timed: MeanNs and StdDevNs are theirs.
	Timed uint64 `json:"timed"`
	// TimedOneIn is 1 when the probe times every call, N when phase 1
	// times one call in N; Shed is set when phase 1 switched the probe off
	// (Mode is then off); TimingReason says why.
	TimedOneIn   uint32 `json:"timedOneIn"`
	Shed         bool   `json:"shed,omitempty"`
	TimingReason string `json:"timingReason,omitempty"`
	// MeanNs and StdDevNs describe the duration of calls, in nanoseconds.
	MeanNs   float64 `json:"meanNs"`
	StdDevNs float64 `json:"stdDevNs"`
	Errors   uint64  `json:"errors"`
	Panics   uint64  `json:"panics"`
	// Concurrency is the mean number of goroutines inside the function, by Little's
	// law (arrival rate × mean duration): no shared counter on the hot path.
	Concurrency float64 `json:"concurrency"`
	// InterArrivalNs is the mean gap between calls: span / count.
	InterArrivalNs float64 `json:"interArrivalNs"`
	// ResultSizeMean and ResultSizeSD summarise the size of the first result
	// (changeability), over the calls that reported one.
	ResultSizeMean float64 `json:"resultSizeMean"`
	ResultSizeSD   float64 `json:"resultSizeSD"`
	// Sized is the number of calls that reported a result size; with 0 the size
	// metrics are unknown rather than zero.
	Sized      uint64 `json:"sized"`
	Cyclomatic int    `json:"cyclomatic"`
	Statements int    `json:"statements"`
	Params     int    `json:"params"`
}

// Snapshot returns every probe's statistics since the program started, by id.
func Snapshot() []Stats {
	registry.mu.Lock()
	probes := append([]*Probe(nil), registry.probes...)
	registry.mu.Unlock()
	span := float64(nanotime() - startNanos)
	out := make([]Stats, 0, len(probes))
	for _, p := range probes {
		out = append(out, p.statsOf(p.totals(), span))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (p *Probe) statsOf(t totals, spanNs float64) Stats {
	in := p.info()
	s := Stats{
		ID: p.id, Signature: in.Signature(), Mode: modeName(p.mode.Load()),
		Count: t.calls(), MeanNs: t.time.Mean, StdDevNs: math.Sqrt(t.time.variance()),
		Errors: t.errs + t.untimedErrs, Panics: t.panics + t.untimedPanics, Timed: uint64(t.time.N),
		ResultSizeMean: t.size.Mean, ResultSizeSD: math.Sqrt(t.size.variance()), Sized: uint64(t.size.N),
		Cyclomatic: in.Cyclomatic, Statements: in.Statements, Params: len(in.Params),
		TimedOneIn: p.timing.Load() + 1, Shed: shedByPhase1(p), TimingReason: p.timingReason(),
	}
	if s.Count > 0 && spanNs > 0 {
		s.InterArrivalNs = spanNs / float64(s.Count)
		s.Concurrency = float64(s.Count) / spanNs * s.MeanNs
	}
	return s
}
