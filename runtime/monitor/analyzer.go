package monitor

import (
	"fmt"
	"slices"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// This file is the monitor's side of the analyzer (package monitor/analyzer):
// what the analysis loop reads (cumulative statistics, the configured settings,
// the records written) and what it changes (the analyzer layer of the mode rules
// and the sampling limit of the overhead budget). Generated code never calls it.

// Counters are the cumulative coarse statistics of every registered probe at one
// instant, as the analyzer keeps them to compute statistics over a window. The
// zero value stands for the program's start (nothing counted yet). A Counters
// value is immutable and safe to share.
type Counters struct {
	probes []*Probe
	tot    []totals // tot[i] belongs to probes[i], whose id is i+1
	off    []bool   // the configuration alone switches probes[i] off
}

// ReadCounters sums every probe's per-P statistics now. It also notes which
// probes the configuration (default mode and configured rules) switches off: the
// analyzer never turns those on. Safe for concurrent use; it never blocks the
// probes' hot path.
func ReadCounters() Counters {
	registry.mu.Lock()
	probes := slices.Clone(registry.probes)
	off := make([]bool, len(probes))
	for i := range probes {
		off[i] = baseModeOf(i) == modeOff
	}
	registry.mu.Unlock()
	tot := make([]totals, len(probes))
	for i, p := range probes {
		tot[i] = p.totals()
	}
	return Counters{probes: probes, tot: tot, off: off}
}

// Len is the number of probes counted.
func (c Counters) Len() int { return len(c.probes) }

// Off reports whether the configuration switches probe id off.
func (c Counters) Off(id uint32) bool {
	i := int(id) - 1
	return i >= 0 && i < len(c.off) && c.off[i]
}

// Since returns every probe's statistics over the calls counted after from (an
// earlier Counters value, or the zero value for the program's start), by id;
// span is the time between the two, for the rates (inter-arrival time,
// concurrency). The subtraction uses the moments' inverse merge, so no call is
// stored.
func (c Counters) Since(from Counters, span time.Duration) []Stats {
	out := make([]Stats, len(c.probes))
	for i, p := range c.probes {
		t := c.tot[i]
		if i < len(from.tot) {
			t = t.minus(from.tot[i])
		}
		out[i] = p.statsOf(t, float64(span))
	}
	return out
}

// Started returns when the monitor's package was initialised, about when the
// program started; it carries a monotonic clock reading.
func Started() time.Time { return wallBase }

// ConfiguredAnalysis returns the analysis settings the program started with
// (linked into the binary, then TIGRIS_* overrides) and whether probes
// registered yet; before that they are the defaults.
func ConfiguredAnalysis() (settings.Analysis, bool) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if !registry.configured {
		return settings.Default().Analysis, false
	}
	return registry.cfg.Analysis, true
}

// FineRecords returns how many fine records the probes handed to the sink since
// the program started.
func FineRecords() uint64 { return fineRecords.Load() }

// Report writes an internal error to stderr as the monitor does: prefixed with
// "tigris: ", once per distinct message and at most one line per second, so a
// failing background task cannot flood the program's output.
func Report(err error) { report(err) }

// SamplingLimit is a ceiling on the sampling rate and the reason for it, as the
// overhead budget sets it.
type SamplingLimit struct {
	// Cap is the highest rate allowed, in (0,1]; 0 means no limit.
	Cap float64
	// Reason says why, in one line, e.g. "overhead budget 2% of CPU: ...".
	Reason string
}

// Applied is the outcome of SetAnalyzerModes.
type Applied struct {
	// Fine are the probes in fine mode after the change, by id; manual rules
	// and the configuration count too.
	Fine []uint32
	// Overridden are probes of the choice whose mode differs from the one
	// chosen, because a manual rule matches them, by id.
	Overridden []uint32
	// Previous is the rate in force before the change; Sampling the rate in
	// force after it (the configured rate, lowered to the limit).
	Previous, Sampling float64
}

// SetAnalyzerModes installs the analyzer layer of the mode rules: choice maps
// probe ids to the mode the analyzer wants (nil removes the layer: every probe
// follows the rules again). Manual rules still win. Then, with the probes'
// modes already switched, limit (when not nil) is called with the fine probes,
// the configured rate and the rate in force until now, and its answer becomes
// the sampling limit; with a nil limit the limit is lifted. Both happen under
// one hold of the monitor's lock, so probes that just went fine start with the
// rate meant for them. limit must not call the monitor. Safe for concurrent use.
func SetAnalyzerModes(choice map[uint32]Mode, limit func(fine []uint32, configured, previous float64) SamplingLimit) (Applied, error) {
	var layer map[uint32]uint32
	if choice != nil {
		layer = make(map[uint32]uint32, len(choice))
	}
	for id, m := range choice {
		mode, err := parseMode(m)
		if err != nil {
			return Applied{}, fmt.Errorf("analyzer mode of probe %d: %w", id, err)
		}
		layer[id] = mode
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	// The rate in force before this change, read before the limit is reset: the
	// budget controller raises at most twofold from it.
	a := Applied{Previous: effectiveSamplingLocked()}
	registry.analyzer = layer
	reevaluate()
	for _, p := range registry.probes {
		m := p.mode.Load()
		if m == modeFine {
			a.Fine = append(a.Fine, p.id)
		}
		if want, ok := layer[p.id]; ok && m != want {
			a.Overridden = append(a.Overridden, p.id)
		}
	}
	samplingLimit = SamplingLimit{}
	if limit != nil {
		samplingLimit = limit(a.Fine, registry.cfg.Sampling, a.Previous)
	}
	applySamplingLocked()
	a.Sampling = effectiveSamplingLocked()
	return a, nil
}

// startAnalyzer starts the analysis schedule the binary links
// (Links.Analyzer) on a goroutine of its own, which ends once the schedule's
// timer is armed: run takes the analyzer's lock and reads the settings, which
// takes registry.mu. Called with registry.mu held.
func startAnalyzer(run func()) {
	go func() {
		defer recoverInternal("analyzer")
		run()
	}()
}
