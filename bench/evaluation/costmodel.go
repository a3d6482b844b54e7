package evaluation

// CostModel is what a monitored call costs the service by the benchmarks
// that measure it per call (docs/performance.md: MooBench at method time 0
// for the hot end, at 500 µs for the cold end; the writer's CPU per record
// from the multi-goroutine table). Each cost is a range [hot, cold] in
// nanoseconds: hot when the probe's data stays in the caches, cold when the
// function's own work pushes it out, as a service's does.
type CostModel struct {
	// Off is a probe compiled in and switched off: a load and a branch.
	Off [2]float64 `json:"offNs"`
	// Timed is a coarse call phase 1 times: two clock reads and the
	// statistics.
	Timed [2]float64 `json:"timedNs"`
	// Untimed is a coarse call phase 1 does not time (it times one in N):
	// the off cost and a random draw. Not measured apart; the range is the
	// off costs plus 2 ns.
	Untimed [2]float64 `json:"untimedNs"`
	// Fine is a call traced in fine mode: its record made by the caller
	// and encoded and written by the writer goroutine, which in this
	// evaluation runs on the service's CPU.
	Fine   [2]float64 `json:"fineNs"`
	Source string     `json:"source"`
}

// DefaultCosts are the per-call costs docs/performance.md reports for this
// tigris: off 0.5 / 4.1 ns, coarse 28.3 / 47.1 ns, fine 37.3 / 78.8 ns at
// the caller plus 26.3 ns of the writer's CPU per record.
func DefaultCosts() CostModel {
	return CostModel{
		Off:     [2]float64{0.5, 4.1},
		Timed:   [2]float64{28.3, 47.1},
		Untimed: [2]float64{2.5, 6.1},
		Fine:    [2]float64{37.3 + 26.3, 78.8 + 26.3},
		Source:  "docs/performance.md: MooBench per-call costs (method time 0 and 500 µs) and the writer's CPU per record",
	}
}

// Predict is the CPU a request costs the service beyond the plain build, in
// µs, at the hot and the cold end of m, for calls monitored calls per
// request of which timed were timed and records traced in fine mode, and
// offCalls calls of probes switched off.
func (m CostModel) Predict(calls, timed, records, offCalls float64) (lo, hi float64) {
	untimed := max(0, calls-timed)
	timedOnly := max(0, timed-records)
	for i, p := range []*float64{&lo, &hi} {
		*p = (offCalls*m.Off[i] + untimed*m.Untimed[i] + timedOnly*m.Timed[i] + records*m.Fine[i]) / 1000
	}
	return lo, hi
}
