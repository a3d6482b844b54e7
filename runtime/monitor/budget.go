package monitor

import (
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"math"
	"os"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The overhead budget (settings.Analysis.Budget, e.g. 0.02 for 2 % of CPU time)
// caps what fine tracing may cost. Package monitor/analyzer runs the controller:
// it knows from calibration (MeasureFineCost, here because it times the real
// probe path) what a fine call and a fine record cost, and from the window's
// coarse counts how often the fine probes run; each cycle it sets a limit on the
// sampling rate (SetAnalyzerModes). This file keeps the limit and the rate in
// force. docs/analysis.md explains the controller.

// samplingLimit is the budget controller's ceiling on the sampling rate; a zero
// Cap means none. Guarded by registry.mu.
var samplingLimit SamplingLimit

// effectiveSamplingLocked is the rate in force: the configured rate, lowered to
// the budget's cap.
func effectiveSamplingLocked() float64 {
	r := registry.cfg.Sampling
	if c := samplingLimit.Cap; c > 0 && c < r {
		r = c
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

// SamplingStatus is the sampling rate as configured and as in force, and why
// they differ: what every surface (the admin endpoint, tigris ctl, /metrics)
// shows, so nobody reads the configured rate and believes it.
type SamplingStatus struct {
	// Configured is the rate set by the configuration or SetSampling: the
	// ceiling.
	Configured float64 `json:"configured"`
	// Effective is the rate in force: Configured, or lower while the overhead
	// budget limits it.
	Effective float64 `json:"effective"`
	// Reason is the overhead budget's last decision in one line, e.g.
	// "overhead budget 2% of CPU: 1.2e+05 fine calls/s allow 5.4% (lowered)";
	// "" while no budget is set.
	Reason string `json:"reason,omitempty"`
}

// CurrentSampling returns the configured and the effective sampling rate and the
// reason for the difference. Safe for concurrent use.
func CurrentSampling() SamplingStatus {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return SamplingStatus{Configured: registry.cfg.Sampling, Effective: effectiveSamplingLocked(), Reason: samplingLimit.Reason}
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
	// CoarseNs is what a coarse call's probe costs (clock reads and the
	// statistics); TapNs what a query's tap adds to each call it delivers
	// (query.go). Queries estimate their cost from them.
	CoarseNs float64 `json:"coarseNs"`
	TapNs    float64 `json:"tapNs"`
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

// MeasureFineCost measures what fine tracing costs per call on this machine. It
// takes about 5 ms (at most five rounds; fewer once that time is spent); the
// analyzer calls it once, on its own goroutine, never during init. Safe for
// concurrent use.
func MeasureFineCost() FineCost { return calibrate() }

// calibrate measures FineCost. The probes are private (not registered, invisible to snapshots) and the
// records go to a private sink, so the program's trace and counters are untouched.
// Each kind's cost is the minimum over rounds: the machine is shared, and the
// minimum is the least disturbed estimate of the work itself.
func calibrate() FineCost {
	start := nanotime()
	info := &ProbeInfo{Package: "github.com/tigrisgo/tigris/runtime/monitor", Name: "calibrate"}
	coarse := newPrivateProbe(info)
	coarse.mode.Store(modeCoarse)
	// A tapped probe with a private tap, never registered: its queue is
	// drained after each round, so every call is delivered.
	tapped := newPrivateProbe(info)
	tapped.mode.Store(modeCoarse)
	tap := &Tap{}
	tap.ring.init(calibrationCalls)
	tapped.taps.Store(&[]probeTap{{t: tap, maxT: math.MaxInt64}})
	fine := newPrivateProbe(info)
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
	rc := Start(fine)
	rctx := context()
	rctx.ess = rc.ess()
	coarseNs, plainNs, recordNs, tapNs := math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)
	for round := 0; round < calibrationRounds && (round == 0 || nanotime()-start < int64(calibrationTime)); round++ {
		coarseNs = num.Min(coarseNs, timeCalls(func() {
			if c := Enter(coarse); c.On() {
				c.Exit(nil)
			}
		}))
		plainNs = num.Min(plainNs, timeCalls(func() { unsampledCall(fine) }))
		recordNs = num.Min(recordNs, timeCalls(func() { rc.record(s, rctx, fine, rc.t0, 0, 0) }))
		tapNs = num.Min(tapNs, timeCalls(func() {
			if c := Enter(tapped); c.On() {
				c.Exit(nil)
			}
		}))
		for {
			if _, ok := tap.ring.pop(); !ok {
				break
			}
		}
	}
	cost.CoarseNs = coarseNs
	cost.TapNs = num.Max(tapNs-coarseNs, 0)
	cost.CallNs = num.Max(plainNs-coarseNs, 0)
	// A record is never free: the floor keeps the controller's division finite.
	cost.RecordNs = num.Max(recordNs, 1)
	cost.TookNs = nanotime() - start
	return cost
}

// unsampledCall is one fine-mode call as Enter and Exit make it when the trace is
// not sampled: the trace context is kept, no record is written.
func unsampledCall(p *Probe) {
	c := Start(p)
	c.fine &^= flagSampled
	c.exit(false, 0, false)
}

func timeCalls(f func()) float64 {
	t0 := nanotime()
	for left := calibrationCalls; left > 0; left-- {
		f()
	}
	return float64(nanotime()-t0) / calibrationCalls
}
