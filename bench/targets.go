package bench

import "fmt"

// TargetCheck is one of tigris's performance targets (docs/performance.md lists
// them) against an experiment's measurements.
type TargetCheck struct {
	Name     string  `json:"name"`     // the portion or property: "I", "C", "C+W", ...
	Target   string  `json:"target"`   // the target in words
	Measured string  `json:"measured"` // what the experiment measured, for people
	Value    float64 `json:"value"`    // the measured number the verdict compares ...
	Limit    float64 `json:"limit"`    // ... with this limit
	Met      bool    `json:"met"`
}

// allocEpsilon is the number of allocations per monitored call below which a
// configuration counts as allocation-free. The counts cover the whole process,
// whose runtime and background goroutines (the monitor's, the writer's)
// allocate a little per second rather than per call: with a long method time
// few calls share those allocations (0.009 per call were seen with 10,000
// calls of 500 µs and probes off). A probe path that allocates shows as 1 per
// call, or its sampled share.
const allocEpsilon = 0.05

// checkTargets compares e's standard configurations with the performance targets,
// using medians (robust to the preemption a shared machine adds) and, for the
// peer, means as well. A target whose configurations are missing is left out.
func (e *ExperimentSummary) checkTargets() []TargetCheck {
	var out []TargetCheck
	cp := e.ClockPairNs
	// I and the allocations are judged under stress only: with a long method
	// time, I is below what the busy wait resolves (it ends at the first
	// clock read past its deadline), and the few calls share the process'
	// background allocations (timers, the runtime), which are per second,
	// not per call.
	stress := e.Params.MethodTime == 0
	if d := e.Config(Deactivated); d != nil && stress {
		v := d.Portion.Median
		out = append(out, TargetCheck{Name: "I", Target: "≤ 1 ns over an uninstrumented call",
			Measured: fmtNs(v), Value: v, Limit: 1, Met: v <= 1})
	}
	if c := e.Config(Coarse); c != nil && cp > 0 {
		v := c.Portion.Median / cp
		out = append(out, TargetCheck{Name: "C", Target: "coarse statistics ≤ 0.8 × a clock pair",
			Measured: fmt.Sprintf("%s = %.2f × %.1f ns", fmtNs(c.Portion.Median), v, cp), Value: v, Limit: 0.8, Met: v <= 0.8})
	}
	fa, d := e.Config(FineAsync), e.Config(Deactivated)
	if fa != nil && d != nil && cp > 0 {
		cw := fa.Overhead.Median - d.Overhead.Median
		v := cw / cp
		lost := int64(0)
		if fa.Trace != nil {
			lost = fa.Trace.Lost + fa.Trace.Unaccounted()
		}
		m := fmt.Sprintf("%s = %.2f × %.1f ns", fmtNs(cw), v, cp)
		if fa.Trace != nil {
			m += fmt.Sprintf(", %d of %d records lost", lost, fa.Trace.Expected)
		}
		out = append(out, TargetCheck{Name: "C+W", Target: "fine record through the async writer ≤ 1 × a clock pair, nothing lost",
			Measured: m, Value: v, Limit: 1, Met: v <= 1 && lost == 0})
	}
	worst, worstName := -1.0, ""
	for _, c := range e.Configs {
		if c.Adds == PortionPeer || c.Adds == PortionT || c.AllocsPerCall < 0 {
			continue
		}
		if c.AllocsPerCall > worst {
			worst, worstName = c.AllocsPerCall, c.Name
		}
	}
	if worst >= 0 && stress {
		m := fmt.Sprintf("at most %.4f per monitored call (%s), whole process", worst, worstName)
		if worst == 0 {
			m = "none in any tigris configuration, whole process"
		}
		out = append(out, TargetCheck{Name: "allocations", Target: "0 allocations on every probe path",
			Measured: m,
			Value:    worst, Limit: allocEpsilon, Met: worst < allocEpsilon})
	}
	// The ratio of the medians to the peer the targets name (the lossless
	// OpenTelemetry span) decides; the ratio of the means is given too.
	if peer := e.Config(e.Peer); fa != nil && peer != nil && fa.Overhead.Median > 0 {
		med := peer.Overhead.Median / fa.Overhead.Median
		m := fmt.Sprintf("%s: %.1f × (median), ", e.Peer, med)
		if fa.Overhead.Mean > 0 {
			m += fmt.Sprintf("%.1f × (mean)", peer.Overhead.Mean/fa.Overhead.Mean)
		} else {
			m += "mean overhead lost in noise"
		}
		out = append(out, TargetCheck{Name: "peer", Target: "a fine record ≥ 10 × cheaper than a lossless OpenTelemetry span (median)",
			Measured: m, Value: med, Limit: 10, Met: med >= 10})
	}
	return out
}
