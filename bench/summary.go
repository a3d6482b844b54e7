package bench

import (
	"fmt"
	"time"

	"github.com/tigrisgo/tigris/internal/moments"
)

// Summary is the analysis of a plan's results: what WriteJSON, WriteTable and
// WriteSVG present.
type Summary struct {
	Plan    string        `json:"plan"`
	Env     Environment   `json:"env"`
	Started time.Time     `json:"started"`
	Builds  []BuildResult `json:"builds,omitempty"`
	// MaxLoadAvg is the highest 1-minute load average seen before a run. Above
	// the number of CPUs the machine was not idle (thesis, R12), and means and
	// confidence intervals mostly measure preemption.
	MaxLoadAvg  float64             `json:"maxLoadAvg"`
	Experiments []ExperimentSummary `json:"experiments"`
	// Scaling compares experiments that differ only in their benchmark
	// goroutines (the goroutine series); nil without such experiments.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Kieker are Kieker's published MooBench figures, for context.
	Kieker []KiekerFigure `json:"kieker"`
}

// ExperimentSummary is one experiment: every configuration's statistics and
// portions.
type ExperimentSummary struct {
	Name   string `json:"name"`
	Params Params `json:"params"`
	// ClockPairNs is the cost of two monotonic clock reads: the median of the
	// values measured by every run of every configuration of the experiment.
	ClockPairNs float64 `json:"clockPairNs"`
	Baseline    string  `json:"baseline"`
	// Peer is the peer the targets compare with (the plan's first), Peers
	// every peer that ran, in plan order.
	Peer    string          `json:"peer,omitempty"`
	Peers   []string        `json:"peers,omitempty"`
	Configs []ConfigSummary `json:"configs"` // in plan order
	// Targets compares the standard configurations with the performance
	// targets (docs/performance.md); empty when the plan lacks them.
	Targets []TargetCheck `json:"targets,omitempty"`
}

// ConfigSummary is one configuration of an experiment.
type ConfigSummary struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Adds        Portion `json:"adds"`
	Over        string  `json:"over,omitempty"`
	Runs        int     `json:"runs"`

	// Stats are ns per top-level call, over every measurement of every run after
	// the warm-up.
	Stats    Stats     `json:"stats"`
	RunMeans []float64 `json:"runMeans"` // each run's mean after the warm-up, ns per top-level call
	// ClockPairNs is the median of this configuration's runs' clock-pair costs.
	ClockPairNs float64  `json:"clockPairNs"`
	OutBytes    int64    `json:"outBytes"` // mean bytes of trace files per run
	Notes       []string `json:"notes,omitempty"`

	// Trace sums the runs' record (or span) counts; nil when the configuration
	// writes nothing countable.
	Trace *TraceCount `json:"trace,omitempty"`
	// AllocsPerCall and AllocBytesPerCall are the heap allocations of the whole
	// process during the benchmark loops (warm-up included) per monitored call;
	// -1 when the raw data did not count them.
	AllocsPerCall     float64 `json:"allocsPerCall"`
	AllocBytesPerCall float64 `json:"allocBytesPerCall"`
	// CallsPerSec is how many monitored calls per second the benchmark loop
	// made, all goroutines together (the mean over runs): with a writer,
	// records per second. CPUPerCall is the process' CPU time (user and
	// system, the writer goroutine's included) per monitored call; 0 when
	// the runs did not measure it. Both cover the whole process, so only
	// differences between configurations mean much.
	CallsPerSec float64 `json:"callsPerSec,omitempty"`
	CPUPerCall  float64 `json:"cpuPerCallNs,omitempty"`

	// Portion is what Adds costs over Over, Overhead everything over the
	// baseline, both per monitored call; zero for the baseline.
	Portion  Cost `json:"portion"`
	Overhead Cost `json:"overhead"`
	// VsPeer is Overhead.Mean as a share of the peer's (0.1: a tenth of the
	// peer's overhead), VsPeerMedian the same of the medians; 0 without a peer
	// or for the baseline. Under stress the peer's mean lies far above its
	// median (a heavy tail of slow calls), so both are given. VsPeers has the
	// same for every peer of the experiment.
	VsPeer       float64     `json:"vsPeer,omitempty"`
	VsPeerMedian float64     `json:"vsPeerMedian,omitempty"`
	VsPeers      []PeerShare `json:"vsPeers,omitempty"`
}

// PeerShare is a configuration's overhead as a share of one peer's.
type PeerShare struct {
	Peer   string  `json:"peer"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
}

// Cost is a difference of two configurations per monitored call.
type Cost struct {
	Mean   float64 `json:"mean"`   // ns: difference of the means ÷ depth
	CI95   float64 `json:"ci95"`   // ns: half-width of its 95 % confidence interval
	Median float64 `json:"median"` // ns: difference of the medians ÷ depth

	// The same as multiples of the experiment's clock-pair cost.
	MeanClockPairs   float64 `json:"meanClockPairs"`
	MedianClockPairs float64 `json:"medianClockPairs"`
}

// Config returns the configuration named name, or nil.
func (e *ExperimentSummary) Config(name string) *ConfigSummary {
	for i := range e.Configs {
		if e.Configs[i].Name == name {
			return &e.Configs[i]
		}
	}
	return nil
}

// Segment is one stacked part of a configuration's bar: the median cost a
// configuration in its chain adds, per monitored call.
type Segment struct {
	Config  string
	Portion Portion
	Ns      float64
}

// Segments returns the stacked parts of c's bar, baseline's T first: the chain
// of configurations c is measured over, each with the median cost it adds.
func (e *ExperimentSummary) Segments(c *ConfigSummary) []Segment {
	var chain []*ConfigSummary
	for x := c; x != nil && len(chain) <= len(e.Configs); x = e.Config(x.Over) {
		chain = append([]*ConfigSummary{x}, chain...)
		if x.Over == "" {
			break
		}
	}
	segs := make([]Segment, 0, len(chain))
	for _, x := range chain {
		ns := x.Portion.Median
		if x.Adds == PortionT {
			ns = x.Stats.Median / float64(e.Params.Depth)
		}
		segs = append(segs, Segment{Config: x.Name, Portion: x.Adds, Ns: ns})
	}
	return segs
}

// Summarize computes the statistics and portions of every experiment of res.
// It loads each configuration's timings from the raw data files in turn and lets
// them go again (timings already in memory, as from ReadRawCSV, are used and
// kept).
func Summarize(res *Results) (*Summary, error) {
	p := &res.Plan
	if err := validateForSummary(p); err != nil {
		return nil, err
	}
	s := &Summary{Plan: p.Name, Env: res.Env, Started: res.Started, Builds: res.Builds}
	for _, e := range p.Experiments {
		es := ExperimentSummary{Name: e.Name, Params: e.Params, Baseline: p.Baseline().Name}
		var pairs []float64
		for _, v := range p.InExperiment(e) {
			cs := ConfigSummary{Name: v.Name, Description: v.Description, Adds: v.Adds, Over: v.Over}
			runs := res.RunsOf(e.Name, v.Name)
			if len(runs) == 0 {
				continue
			}
			var pooled []int64
			var vpairs []float64
			var outBytes int64
			var mallocs, allocBytes, calls int64
			var cpu time.Duration
			var rates []float64
			cpuCalls := int64(0)
			for _, r := range runs {
				loaded := r.Timings == nil
				if err := r.Load(); err != nil {
					return nil, err
				}
				if r.Depth != 0 && r.Depth != e.Params.Depth {
					return nil, fmt.Errorf("%s run %d of %s: depth %d, want %d", v.Name, r.Run, e.Name, r.Depth, e.Params.Depth)
				}
				if pooled == nil {
					steady := r.Calls - WarmupCalls(r.Calls, e.Params.Warmup)
					pooled = make([]int64, 0, len(runs)*r.Goroutines*steady)
				}
				n := len(pooled)
				pooled = r.AppendSteady(pooled, e.Params.Warmup)
				cs.RunMeans = append(cs.RunMeans, moments.Of(pooled[n:]).Mean())
				if loaded {
					r.Timings = nil
				}
				if r.ClockPairNs > 0 {
					vpairs = append(vpairs, r.ClockPairNs)
				}
				outBytes += r.OutBytes
				monitored := int64(r.Calls) * int64(r.Goroutines) * int64(e.Params.Depth)
				if r.Elapsed > 0 {
					rates = append(rates, float64(monitored)/r.Elapsed.Seconds())
				}
				if r.CPU > 0 && cpuCalls >= 0 {
					cpu += r.CPU
					cpuCalls += monitored
				} else {
					cpuCalls = -1 // one run without it spoils the sum
				}
				if r.Mallocs >= 0 && mallocs >= 0 {
					mallocs += r.Mallocs
					allocBytes += r.AllocBytes
					calls += int64(r.Calls) * int64(r.Goroutines) * int64(e.Params.Depth)
				} else {
					mallocs = -1 // one run without counts spoils the sum
				}
				if r.Trace != nil {
					if cs.Trace == nil {
						cs.Trace = &TraceCount{}
					}
					cs.Trace.Add(r.Trace)
				}
				s.MaxLoadAvg = max(s.MaxLoadAvg, r.LoadAvg)
				for _, n := range r.Notes {
					cs.Notes = append(cs.Notes, fmt.Sprintf("run %d: %s", r.Run, n))
				}
			}
			cs.Runs = len(runs)
			if v.Adds == PortionPeer {
				if es.Peer == "" {
					es.Peer = v.Name
				}
				es.Peers = append(es.Peers, v.Name)
			}
			cs.AllocsPerCall, cs.AllocBytesPerCall = -1, -1
			if mallocs >= 0 && calls > 0 {
				cs.AllocsPerCall = float64(mallocs) / float64(calls)
				cs.AllocBytesPerCall = float64(allocBytes) / float64(calls)
			}
			if len(rates) > 0 {
				cs.CallsPerSec = moments.Of(rates).Mean()
			}
			if cpuCalls > 0 {
				cs.CPUPerCall = float64(cpu.Nanoseconds()) / float64(cpuCalls)
			}
			cs.Stats = Compute(pooled)
			cs.ClockPairNs = moments.Median(vpairs)
			cs.OutBytes = outBytes / int64(len(runs))
			pairs = append(pairs, vpairs...)
			es.Configs = append(es.Configs, cs)
		}
		es.ClockPairNs = moments.Median(pairs)
		if len(es.Configs) == 0 {
			continue // not run yet: the results of an interrupted plan
		}
		if es.Config(es.Baseline) == nil {
			return nil, fmt.Errorf("experiment %s: no runs of the baseline %s", e.Name, es.Baseline)
		}
		es.derivePortions()
		es.Targets = es.checkTargets()
		s.Experiments = append(s.Experiments, es)
	}
	if len(s.Experiments) == 0 {
		return nil, fmt.Errorf("plan %q: no runs to summarize", p.Name)
	}
	s.Scaling = scalingOf(s.Experiments)
	s.Kieker = kiekerFigures
	return s, nil
}

func validateForSummary(p *Plan) error {
	if p.Baseline() == nil {
		return fmt.Errorf("plan %q: no baseline configuration", p.Name)
	}
	for _, v := range p.Variants {
		if v.Over != "" && p.Variant(v.Over) == nil {
			return fmt.Errorf("plan %q: configuration %q is measured over unknown %q", p.Name, v.Name, v.Over)
		}
	}
	return nil
}

// derivePortions fills every configuration's Portion, Overhead and VsPeer from
// the statistics.
func (e *ExperimentSummary) derivePortions() {
	base := e.Config(e.Baseline)
	depth := float64(e.Params.Depth)
	diff := func(a, b *ConfigSummary) Cost {
		c := Cost{
			Mean:   (a.Stats.Mean - b.Stats.Mean) / depth,
			CI95:   DiffCI95(a.Stats, b.Stats) / depth,
			Median: (a.Stats.Median - b.Stats.Median) / depth,
		}
		if e.ClockPairNs > 0 {
			c.MeanClockPairs = c.Mean / e.ClockPairNs
			c.MedianClockPairs = c.Median / e.ClockPairNs
		}
		return c
	}
	for i := range e.Configs {
		c := &e.Configs[i]
		if c.Adds == PortionT {
			continue
		}
		if over := e.Config(c.Over); over != nil {
			c.Portion = diff(c, over)
		}
		c.Overhead = diff(c, base)
	}
	for i := range e.Configs {
		c := &e.Configs[i]
		if c.Adds == PortionT {
			continue
		}
		for _, name := range e.Peers {
			peer := e.Config(name)
			if peer == nil || name == c.Name {
				continue
			}
			var ps PeerShare
			ps.Peer = name
			if peer.Overhead.Mean > 0 {
				ps.Mean = c.Overhead.Mean / peer.Overhead.Mean
			}
			if peer.Overhead.Median > 0 {
				ps.Median = c.Overhead.Median / peer.Overhead.Median
			}
			c.VsPeers = append(c.VsPeers, ps)
			if name == e.Peer {
				c.VsPeer, c.VsPeerMedian = ps.Mean, ps.Median
			}
		}
	}
}
