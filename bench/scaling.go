package bench

import "slices"

// Scaling is the goroutine series: experiments with the same parameters but
// for their benchmark goroutines, side by side, to see whether a record costs
// more as more goroutines produce them (it must not: each P has its own
// queue, and a producer whose queue is full encodes it itself).
type Scaling struct {
	// Experiments are the series' experiments, by goroutines ascending.
	Experiments []string `json:"experiments"`
	Goroutines  []int    `json:"goroutines"`
	// Rows has one entry per configuration that collects or writes (adds C
	// or W) and ran in every experiment of the series, in plan order.
	Rows []ScalingRow `json:"rows"`
}

// ScalingRow is one configuration across the series; each slice has one
// entry per experiment.
type ScalingRow struct {
	Config string `json:"config"`
	// OverheadMedian is the median overhead per monitored call (ns), as a
	// goroutine's response time shows it.
	OverheadMedian []float64 `json:"overheadMedianNs"`
	// PortionMedian is the median of the portion the configuration adds
	// (W for the writers), per monitored call.
	PortionMedian []float64 `json:"portionMedianNs"`
	// PortionCPU is the CPU time per monitored call the configuration adds
	// over the one it is measured over (the process' user and system time,
	// writer goroutine included); 0 where not measured.
	PortionCPU []float64 `json:"portionCPUNs"`
	// CallsPerSec is the throughput of all goroutines together.
	CallsPerSec []float64 `json:"callsPerSec"`
	// LostShare is the share of records or spans lost; nil when the
	// configuration writes nothing countable.
	LostShare []float64 `json:"lostShare,omitempty"`
}

// scalingOf finds the goroutine series among exps: experiments that agree in
// everything but the goroutines (and calls per goroutine), at least two
// goroutine counts. It returns the series of the first experiment that has
// one, or nil.
func scalingOf(exps []ExperimentSummary) *Scaling {
	for i := range exps {
		series := []*ExperimentSummary{&exps[i]}
		for j := range exps {
			if j != i && sameButGoroutines(exps[i].Params, exps[j].Params) {
				series = append(series, &exps[j])
			}
		}
		if len(series) < 2 {
			continue
		}
		slices.SortStableFunc(series, func(a, b *ExperimentSummary) int { return a.Params.Goroutines - b.Params.Goroutines })
		sc := &Scaling{}
		for _, e := range series {
			sc.Experiments = append(sc.Experiments, e.Name)
			sc.Goroutines = append(sc.Goroutines, e.Params.Goroutines)
		}
	configs:
		for _, c := range series[len(series)-1].Configs {
			if c.Adds != PortionC && c.Adds != PortionW {
				continue
			}
			row := ScalingRow{Config: c.Name}
			for _, e := range series {
				ec := e.Config(c.Name)
				if ec == nil {
					continue configs
				}
				row.OverheadMedian = append(row.OverheadMedian, ec.Overhead.Median)
				row.PortionMedian = append(row.PortionMedian, ec.Portion.Median)
				var cpu float64
				if over := e.Config(ec.Over); over != nil && ec.CPUPerCall > 0 && over.CPUPerCall > 0 {
					cpu = ec.CPUPerCall - over.CPUPerCall
				}
				row.PortionCPU = append(row.PortionCPU, cpu)
				row.CallsPerSec = append(row.CallsPerSec, ec.CallsPerSec)
				if ec.Trace != nil {
					row.LostShare = append(row.LostShare, ec.Trace.LostShare())
				}
			}
			if len(row.LostShare) != len(series) {
				row.LostShare = nil
			}
			sc.Rows = append(sc.Rows, row)
		}
		return sc
	}
	return nil
}

func sameButGoroutines(a, b Params) bool {
	return a.Goroutines != b.Goroutines && a.Depth == b.Depth && a.MethodTime == b.MethodTime && a.Warmup == b.Warmup
}
