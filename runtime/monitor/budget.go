package monitor

import (
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"math"
	"os"
	"runtime"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The overhead budget (settings.Analysis.Budget, e.g. 0.02 for 2 % of CPU time)
// caps what fine tracing may cost. The analyzer knows from calibration what a fine
// call and a fine record cost, and from the window's coarse counts how often the
// fine probes run; each cycle it sets the sampling rate in force to the highest
// rate the budget allows, never above the configured rate (Sampling) and never
// below minSampling. docs/analysis.md explains the controller.

// minSampling is the floor of the budget controller: below one call in a thousand
// a trace stops being a sample anyone can read, and the fixed cost of fine mode
// dominates anyway.
const minSampling = 0.001

// samplingCap is the budget controller's ceiling on the sampling rate; 0 means
// none. Guarded by registry.mu.
var samplingCap float64

// effectiveSamplingLocked is the rate in force: the configured rate, lowered to
// the budget's cap.
func effectiveSamplingLocked() float64 {
	r := registry.cfg.Sampling
	if samplingCap > 0 && samplingCap < r {
		r = samplingCap
	}
	return r
}

// applySamplingLocked stores the rate in force where the hot path reads it.
func applySamplingLocked() {
	sampleThreshold.Store(uint64(math.Round(effectiveSamplingLocked() * (1 << 32))))
}

// EffectiveSampling returns the sampling rate in force: Sampling, or less while
// the overhead budget limits it. Safe for concurrent use.
func EffectiveSampling() float64 {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return effectiveSamplingLocked()
}

// FineCost is what fine tracing costs per call on this machine, measured once by
// running the real probe path on private probes (see calibrate).
type FineCost struct {
	// CallNs is what a fine-mode call costs beyond a coarse one when it is not
	// sampled (trace context bookkeeping); every call of a fine probe pays it.
	CallNs float64 `json:"callNs"`
	// RecordNs is what a sampled call costs beyond an unsampled one: building the
	// record and writing it (encoding included when Sink is "sync"), timed alone.
	RecordNs float64 `json:"recordNs"`
	// Sink is the sink calibration wrote to: "sync" (a synchronous writer on the
	// null device, so encoding is counted) or "null" (records discarded).
	Sink string `json:"sink"`
	// Took is how long calibration ran.
	TookNs int64 `json:"tookNs"`
}

// calibrate runs rounds of calibrationCalls calls of each of three kinds, up to
// calibrationRounds rounds but no more rounds once calibrationTime is spent: with
// the linked goroutine slot a round takes well under a millisecond, with the
// portable one (~5 µs per fine call) one round takes about 5 ms.
const (
	calibrationCalls  = 500
	calibrationRounds = 5
	calibrationTime   = 5 * time.Millisecond
)

// calibrate measures FineCost. It runs on the analyzer goroutine, never during
// init. The probes are private (not registered, invisible to snapshots) and the
// records go to a private sink, so the program's trace and counters are untouched.
// Each kind's cost is the minimum over rounds: the machine is shared, and the
// minimum is the least disturbed estimate of the work itself.
func calibrate() FineCost {
	start := nanotime()
	info := &ProbeInfo{Package: "github.com/tigrisgo/tigris/runtime/monitor", Name: "calibrate"}
	coarse := &Probe{info: info, stats: newStripes()}
	coarse.mode.Store(modeCoarse)
	fine := &Probe{info: info, stats: newStripes()}
	fine.mode.Store(modeFine)

	cost := FineCost{Sink: "sync"}
	var s writer.Sink
	// A synchronous writer on the null device encodes every record as the file
	// writers do, so the cost includes the encoding an async writer does on its own
	// goroutine: CPU time either way.
	sw, err := writer.NewSync(writer.Options{Path: os.DevNull, FlushInterval: time.Hour})
	if err != nil {
		s, cost.Sink = &writer.Null{}, "null"
	} else {
		s = sw
		defer sw.Close()
	}

	// The record is timed on its own rather than as the difference of a sampled and
	// an unsampled call: the trace-context lookup of the portable slot varies by
	// more than a record costs.
	rc := Call{p: fine}
	rc.enterFine()
	rctx := context()
	rctx.ess = rc.ess()
	coarseNs, plainNs, recordNs := math.Inf(1), math.Inf(1), math.Inf(1)
	for round := 0; round < calibrationRounds && (round == 0 || nanotime()-start < int64(calibrationTime)); round++ {
		coarseNs = num.Min(coarseNs, timeCalls(func() {
			if c := Enter(coarse); c.On() {
				c.Exit(nil)
			}
		}))
		plainNs = num.Min(plainNs, timeCalls(func() { unsampledCall(fine) }))
		recordNs = num.Min(recordNs, timeCalls(func() { rc.record(s, rctx, fine, rc.t0, false, false, 0, false) }))
	}
	cost.CallNs = num.Max(plainNs-coarseNs, 0)
	// A record is never free: the floor keeps the controller's division finite.
	cost.RecordNs = num.Max(recordNs, 1)
	cost.TookNs = nanotime() - start
	return cost
}

// unsampledCall is one fine-mode call as Enter and Exit make it when the trace is
// not sampled: the trace context is kept, no record is written.
func unsampledCall(p *Probe) {
	c := Call{p: p}
	c.enterFine()
	c.fine &^= flagSampled
	c.t0 = nanotime()
	t1 := nanotime()
	p.stats.add(t1-c.t0, false, false, 0, false)
	c.exitFine(p, t1, false, false, 0, false)
}

func timeCalls(f func()) float64 {
	t0 := nanotime()
	for left := calibrationCalls; left > 0; left-- {
		f()
	}
	return float64(nanotime()-t0) / calibrationCalls
}

// Budget is the budget controller's decision in one cycle.
type Budget struct {
	// Budget is the allowed share of CPU time (settings), e.g. 0.02.
	Budget float64 `json:"budget"`
	// Cost is the calibrated cost the decision used.
	Cost FineCost `json:"cost"`
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
	cost        FineCost
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

// procs is the CPU time available per wall second, in CPUs.
func procs() int { return runtime.GOMAXPROCS(0) }
