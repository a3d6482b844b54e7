package analyzer

import (
	"fmt"
	"runtime"

	"github.com/tigrisgo/tigris/runtime/internal/num"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// The overhead budget (settings.Analysis.Budget, e.g. 0.02 for 2 % of CPU time)
// caps what fine tracing may cost. The analyzer knows from calibration
// (monitor.MeasureFineCost) what a fine call and a fine record cost, and from the
// window's coarse counts how often the fine probes run; each cycle it sets the
// sampling rate in force to the highest rate the budget allows, never above the
// configured rate and never below minSampling. docs/analysis.md explains the
// controller.

// minSampling is the floor of the budget controller: below one call in a thousand
// a trace stops being a sample anyone can read, and the fixed cost of fine mode
// dominates anyway.
const minSampling = 0.001

// Budget is the budget controller's decision in one cycle.
type Budget struct {
	// Budget is the allowed share of CPU time (settings), e.g. 0.02.
	Budget float64 `json:"budget"`
	// Cost is the calibrated cost the decision used.
	Cost monitor.FineCost `json:"cost"`
	// Procs is GOMAXPROCS: the CPU time available per second is Procs seconds.
	Procs int `json:"procs"`
	// FineCallsPerSec is how often the probes in fine mode after this cycle ran
	// during the window (coarse counts, so sampling does not hide calls).
	FineCallsPerSec float64 `json:"fineCallsPerSec"`
	// RecordsPerSec is the measured rate of fine records since the previous cycle.
	RecordsPerSec float64 `json:"recordsPerSec"`
	// Configured is the configured sampling rate, the ceiling; Previous the rate
	// in force before this cycle and Rate the one chosen.
	Configured float64 `json:"configured"`
	Previous   float64 `json:"previous"`
	Rate       float64 `json:"rate"`
	// Share is the predicted share of CPU time fine tracing takes at Rate.
	Share float64 `json:"share"`
	// Action is "kept", "lowered", "raised" or "floor" (even the floor rate
	// exceeds the budget: fewer functions must be fine to meet it).
	Action string `json:"action"`
}

// budgetInput is what the controller decides from.
type budgetInput struct {
	budget      float64
	cost        monitor.FineCost
	procs       int
	callsPerSec float64
	configured  float64
	previous    float64
}

// decideSampling is the budget controller: a pure function of its input so it can
// be tested with a fake cost.
//
// The predicted CPU share of fine tracing at rate s is
//
//	calls/s × (CallNs + s × RecordNs) / (procs × 1e9)
//
// and the controller picks the largest s that keeps it within the budget, clamped
// to [minSampling, configured]. It lowers at once (the budget is a ceiling) but
// raises at most twofold per cycle: a quiet window after a burst would otherwise
// jump straight back to the full rate and overshoot when the burst returns.
func decideSampling(in budgetInput) Budget {
	b := Budget{
		Budget: in.budget, Cost: in.cost, Procs: in.procs, FineCallsPerSec: in.callsPerSec,
		Configured: in.configured, Previous: in.previous,
	}
	floor := num.Min(minSampling, in.configured)
	capacity := in.budget * float64(num.Max(in.procs, 1)) * 1e9 // ns of CPU per second
	fixed := in.callsPerSec * in.cost.CallNs
	perRate := in.callsPerSec * num.Max(in.cost.RecordNs, 1)
	var s float64
	switch {
	case in.callsPerSec <= 0:
		s = in.configured
	case fixed >= capacity:
		s = floor
		b.Action = "floor"
	default:
		s = (capacity - fixed) / perRate
	}
	if in.previous > 0 {
		s = num.Min(s, num.Max(2*in.previous, floor))
	}
	s = num.Max(num.Min(s, in.configured), floor)
	if b.Action == "" {
		switch {
		case s < in.previous:
			b.Action = "lowered"
		case s > in.previous:
			b.Action = "raised"
		default:
			b.Action = "kept"
		}
		if s == floor && capacity < fixed+s*perRate {
			b.Action = "floor"
		}
	}
	b.Rate = s
	b.Share = (fixed + s*perRate) / (float64(num.Max(in.procs, 1)) * 1e9)
	if in.callsPerSec <= 0 {
		b.Share = 0
	}
	return b
}

// Reason says in one line why the rate in force is what it is, for the
// sampling endpoint and tigris ctl: "overhead budget 2% of CPU: 120k fine
// calls/s allow 5.4% (lowered)". The budget is as set; what was measured and
// worked out is rounded to three significant digits.
func (b *Budget) Reason() string {
	s := fmt.Sprintf("overhead budget %s of CPU: %s fine calls/s", settings.FormatPercent(b.Budget), settings.HumanNum(b.FineCallsPerSec))
	switch {
	case b.Action == "floor":
		return s + fmt.Sprintf(" cost more than the budget even unsampled; held at the floor %s (fewer functions must be fine)", settings.HumanPercent(b.Rate))
	case b.Rate >= b.Configured:
		return s + " fit at the configured rate"
	case b.Action == "raised":
		return s + fmt.Sprintf(" allow more; raised to %s (at most twofold per cycle)", settings.HumanPercent(b.Rate))
	}
	return s + fmt.Sprintf(" allow %s (%s)", settings.HumanPercent(b.Rate), b.Action)
}

// procs is the CPU time available per wall second, in CPUs.
func procs() int { return runtime.GOMAXPROCS(0) }
