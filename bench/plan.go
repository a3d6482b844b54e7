package bench

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Portion names the part of a response time a configuration adds over the one it
// is measured against (thesis, section 6.2).
type Portion string

const (
	PortionT    Portion = "T"    // the method itself: the uninstrumented baseline
	PortionI    Portion = "I"    // instrumentation, probe compiled in but deactivated
	PortionC    Portion = "C"    // collecting: timing the call, building the record
	PortionW    Portion = "W"    // writing the record
	PortionPeer Portion = "peer" // everything another monitoring framework adds
)

// Params are one experiment's MooBench parameters; the thesis' defaults are
// 10 runs, 2,000,000 calls, warm-up 0.5, depth 10, one goroutine.
type Params struct {
	Calls      int           `json:"calls"`        // top-level calls per goroutine and run
	Warmup     float64       `json:"warmup"`       // share of every goroutine's calls discarded, in [0, 1)
	Depth      int           `json:"depth"`        // monitored calls per top-level call
	MethodTime time.Duration `json:"methodTimeNs"` // busy wait at the deepest level
	Runs       int           `json:"runs"`         // fresh processes per configuration
	Goroutines int           `json:"goroutines"`   // benchmark goroutines per process
	ClockPairs int           `json:"clockPairs"`   // clock pairs each run times; 0: the program's default
}

// Experiment is one parameter set a plan runs its configurations with.
type Experiment struct {
	Name   string `json:"name"`
	Params Params `json:"params"`
	// Configs, when set, are the configurations this experiment runs, with
	// those they are measured over; empty: every configuration of the plan.
	Configs []string `json:"configs,omitempty"`
	// Scaling marks an experiment of the goroutine series: the same
	// parameters as another with more benchmark goroutines. --goroutines
	// and --method-time, which would make it a copy of that one, drop it.
	Scaling bool `json:"scaling,omitempty"`
}

// BuildFunc builds a benchmark program to the executable path exe. It is called
// once per [Binary] and plan, never concurrently; the error should carry the
// build's output.
type BuildFunc func(ctx context.Context, exe string) error

// Binary is one program a plan builds.
type Binary struct {
	Name  string    `json:"name"`
	Build BuildFunc `json:"-"`
	// Description says how it is built, for the progress output.
	Description string `json:"description,omitempty"`
}

// Variant is one configuration: a binary and how to run it.
type Variant struct {
	Name   string `json:"name"`   // unique in the plan: "baseline", "fine-async"
	Binary string `json:"binary"` // the Binary it runs

	// Adds is the portion this configuration adds over Over, the configuration it
	// is measured against ("" only for the baseline, whose Adds is PortionT).
	Adds Portion `json:"adds"`
	Over string  `json:"over,omitempty"`

	// Env is added to the environment of every run, Args to its command line
	// (after the benchmark flags). "{scratch}" in either is replaced by the run's
	// scratch directory, which is also its working directory and is removed
	// after the run. TIGRIS_* and OTEL_* variables are not inherited from the
	// driver's environment; only Env sets them.
	Env  []string `json:"env,omitempty"`
	Args []string `json:"args,omitempty"`

	// Calls, when set, caps the calls per goroutine of this configuration's
	// runs in every experiment: a peer that writes a kilobyte of JSON per
	// span would take minutes per run and fill the disk at the thesis' two
	// million calls, and a median settles long before. The warm-up share
	// applies to the capped count.
	Calls int `json:"calls,omitempty"`

	// Trace, when set, is the tigris trace file a run writes ("{scratch}" is
	// replaced as in Env). The driver reads it after the run, before the scratch
	// directory goes, and counts the records written and lost (RunData.Trace):
	// a writer that drops records looks cheaper than one that writes them all,
	// so the W portion means little without the count.
	Trace string `json:"trace,omitempty"`

	Description string `json:"description,omitempty"`
}

// Plan is a whole benchmark: what to build, what to run, with which parameters.
type Plan struct {
	Name        string       `json:"name"`
	Binaries    []Binary     `json:"binaries"`
	Variants    []Variant    `json:"variants"` // in run order
	Experiments []Experiment `json:"experiments"`
	// Pause is an idle time before every run, to let the system settle
	// (MooBench's SLEEPTIME).
	Pause time.Duration `json:"pauseNs,omitempty"`
}

// Variant returns the configuration named name, or nil.
func (p Plan) Variant(name string) *Variant {
	for i := range p.Variants {
		if p.Variants[i].Name == name {
			return &p.Variants[i]
		}
	}
	return nil
}

// Baseline returns the configuration that adds T, or nil.
func (p Plan) Baseline() *Variant {
	for i := range p.Variants {
		if p.Variants[i].Adds == PortionT {
			return &p.Variants[i]
		}
	}
	return nil
}

// Peer returns the first configuration that adds PortionPeer, or nil: the
// peer the targets compare with.
func (p Plan) Peer() *Variant {
	for i := range p.Variants {
		if p.Variants[i].Adds == PortionPeer {
			return &p.Variants[i]
		}
	}
	return nil
}

// InExperiment returns the configurations e runs, in plan order: all of them,
// or those e.Configs names and the ones they are measured over.
func (p Plan) InExperiment(e Experiment) []*Variant {
	keep := map[string]bool{}
	for _, n := range e.Configs {
		if v := p.Variant(n); v != nil {
			for _, c := range p.Chain(v) {
				keep[c.Name] = true
			}
		}
	}
	var out []*Variant
	for i := range p.Variants {
		if len(e.Configs) == 0 || keep[p.Variants[i].Name] {
			out = append(out, &p.Variants[i])
		}
	}
	return out
}

// CallsFor is how many calls per goroutine v's runs make in an experiment
// with parameters q: q.Calls, capped at v.Calls.
func (v *Variant) CallsFor(q Params) int {
	if v.Calls > 0 && v.Calls < q.Calls {
		return v.Calls
	}
	return q.Calls
}

// Chain returns the configurations v stacks on, baseline first, v last.
func (p Plan) Chain(v *Variant) []*Variant {
	var chain []*Variant
	for c := v; c != nil && len(chain) <= len(p.Variants); c = p.Variant(c.Over) {
		chain = append([]*Variant{c}, chain...)
		if c.Over == "" {
			break
		}
	}
	return chain
}

// Validate checks the whole plan before anything is built or run.
func (p Plan) Validate() error {
	if len(p.Variants) == 0 {
		return fmt.Errorf("plan %q: no configurations", p.Name)
	}
	if len(p.Experiments) == 0 {
		return fmt.Errorf("plan %q: no experiments", p.Name)
	}
	bins := map[string]bool{}
	for _, b := range p.Binaries {
		if b.Name == "" || bins[b.Name] {
			return fmt.Errorf("plan %q: binary name %q empty or duplicated", p.Name, b.Name)
		}
		if b.Build == nil {
			return fmt.Errorf("plan %q: binary %q has no build function", p.Name, b.Name)
		}
		bins[b.Name] = true
	}
	names := map[string]bool{}
	baselines := 0
	for _, v := range p.Variants {
		if v.Name == "" || names[v.Name] {
			return fmt.Errorf("plan %q: configuration name %q empty or duplicated", p.Name, v.Name)
		}
		names[v.Name] = true
		if !bins[v.Binary] {
			return fmt.Errorf("plan %q: configuration %q runs unknown binary %q", p.Name, v.Name, v.Binary)
		}
		if v.Calls < 0 {
			return fmt.Errorf("plan %q: configuration %q: negative call cap %d", p.Name, v.Name, v.Calls)
		}
		switch v.Adds {
		case PortionT:
			baselines++
			if v.Over != "" {
				return fmt.Errorf("plan %q: baseline %q is measured over %q; a baseline stands alone", p.Name, v.Name, v.Over)
			}
		case PortionI, PortionC, PortionW, PortionPeer:
			if v.Over == "" {
				return fmt.Errorf("plan %q: configuration %q adds %s but is measured over nothing", p.Name, v.Name, v.Adds)
			}
		default:
			return fmt.Errorf("plan %q: configuration %q adds unknown portion %q", p.Name, v.Name, v.Adds)
		}
	}
	if baselines != 1 {
		return fmt.Errorf("plan %q: %d baseline configurations (adding T); want 1", p.Name, baselines)
	}
	for i := range p.Variants {
		v := &p.Variants[i]
		seen := map[string]bool{v.Name: true}
		for c := v; c.Over != ""; {
			next := p.Variant(c.Over)
			if next == nil {
				return fmt.Errorf("plan %q: configuration %q is measured over unknown %q", p.Name, c.Name, c.Over)
			}
			if seen[next.Name] {
				return fmt.Errorf("plan %q: configuration %q: cycle through %q", p.Name, v.Name, next.Name)
			}
			seen[next.Name] = true
			c = next
		}
	}
	exps := map[string]bool{}
	for _, e := range p.Experiments {
		if e.Name == "" || exps[e.Name] {
			return fmt.Errorf("plan %q: experiment name %q empty or duplicated", p.Name, e.Name)
		}
		exps[e.Name] = true
		for _, n := range e.Configs {
			if p.Variant(n) == nil {
				return fmt.Errorf("plan %q: experiment %q names unknown configuration %q", p.Name, e.Name, n)
			}
		}
		q := e.Params
		if q.Calls < 1 || q.Depth < 1 || q.Runs < 1 || q.Goroutines < 1 || q.MethodTime < 0 || q.ClockPairs < 0 ||
			q.Warmup < 0 || q.Warmup >= 1 {
			return fmt.Errorf("plan %q: experiment %q: invalid parameters %+v (want calls, depth, runs, goroutines ≥ 1, method time ≥ 0, 0 ≤ warm-up < 1)",
				p.Name, e.Name, q)
		}
	}
	return nil
}

// Estimate is a rough duration of the plan's runs (not its builds): the method
// time plus perCall for every monitored call, and runOverhead per run.
func (p Plan) Estimate(perCall time.Duration) time.Duration {
	var d time.Duration
	for _, e := range p.Experiments {
		for _, v := range p.InExperiment(e) {
			q := e.Params
			q.Calls = v.CallsFor(q)
			d += time.Duration(q.Runs) * (q.estimate(perCall) + p.Pause)
		}
	}
	return d
}

// runOverhead is what a run costs besides its calls: starting the process,
// timing the clock pairs, writing and reading the raw data (about 0.3 s on the
// development machine).
const runOverhead = 300 * time.Millisecond

// estimate is how long one run of q takes if a monitored call costs perCall
// of CPU besides the method time: the goroutines share the CPUs.
func (q Params) estimate(perCall time.Duration) time.Duration {
	call := q.MethodTime + time.Duration(q.Depth)*perCall
	g := max(1, q.Goroutines/max(1, runtime.NumCPU()))
	return time.Duration(q.Calls*g)*call + runOverhead
}

// Overrides change a plan's experiments (the command line's --calls, --runs,
// ...). A zero field keeps the plan's value.
type Overrides struct {
	Calls      int
	Runs       int
	Depth      int
	Goroutines int
	Warmup     float64 // 0 keeps; there is no way to ask for no warm-up at all
	// MethodTimes, when set, replace the plan's experiments by one per method
	// time, named "mt" and the duration ("mt0", "mt500us"). Each takes the
	// parameters of the plan's experiment with the same method time if there is
	// one, else those of the plan's first experiment.
	MethodTimes []time.Duration
}

// With returns p with o applied to its experiments; p is not changed. Validate
// the result.
func (p Plan) With(o Overrides) Plan {
	exps := slices.Clone(p.Experiments)
	if len(o.MethodTimes) > 0 || o.Goroutines > 0 {
		exps = slices.DeleteFunc(exps, func(e Experiment) bool { return e.Scaling })
	}
	if len(o.MethodTimes) > 0 && len(exps) > 0 {
		var out []Experiment
		for _, mt := range o.MethodTimes {
			e := exps[0]
			if i := slices.IndexFunc(exps, func(e Experiment) bool { return e.Params.MethodTime == mt }); i >= 0 {
				e = exps[i]
			}
			e.Name = MethodTimeName(mt)
			e.Params.MethodTime = mt
			out = append(out, e)
		}
		exps = out
	}
	for i := range exps {
		q := &exps[i].Params
		if o.Calls > 0 {
			q.Calls = o.Calls
		}
		if o.Runs > 0 {
			q.Runs = o.Runs
		}
		if o.Depth > 0 {
			q.Depth = o.Depth
		}
		if o.Goroutines > 0 {
			q.Goroutines = o.Goroutines
		}
		if o.Warmup > 0 {
			q.Warmup = o.Warmup
		}
	}
	p.Experiments = exps
	return p
}

// MethodTimeName names an experiment by its method time: "mt0", "mt500us",
// "mt1ms", "mt1.5ms" (ASCII, for file names).
func MethodTimeName(mt time.Duration) string {
	if mt == 0 {
		return "mt0"
	}
	return "mt" + strings.ReplaceAll(mt.String(), "µ", "u")
}

// Only returns p with only the named configurations and those they are measured
// over, in p's order; an experiment that runs only some configurations keeps
// those of them that remain, and is dropped when none of those it names does.
// Unknown names are an error.
func (p Plan) Only(names ...string) (Plan, error) {
	keep := map[string]bool{}
	for _, n := range names {
		v := p.Variant(n)
		if v == nil {
			return p, fmt.Errorf("plan %q has no configuration %q", p.Name, n)
		}
		for _, c := range p.Chain(v) {
			keep[c.Name] = true
		}
	}
	var vs []Variant
	for _, v := range p.Variants {
		if keep[v.Name] {
			vs = append(vs, v)
		}
	}
	p.Variants = vs
	var exps []Experiment
	for _, e := range p.Experiments {
		if len(e.Configs) > 0 {
			e.Configs = slices.DeleteFunc(slices.Clone(e.Configs), func(n string) bool { return !keep[n] })
			if len(e.Configs) == 0 {
				continue
			}
		}
		exps = append(exps, e)
	}
	p.Experiments = exps
	return p, nil
}

// Describe says on w what running p will do, with its results going to out, and
// how long it may take at the least; it warns when the machine is busy.
func Describe(w io.Writer, p Plan, out string) {
	var names []string
	for _, v := range p.Variants {
		names = append(names, v.Name)
	}
	fmt.Fprintf(w, "bench: plan %s, configurations %s; results in %s\n", p.Name, strings.Join(names, ", "), out)
	for _, e := range p.Experiments {
		q := e.Params
		var which string
		if len(e.Configs) > 0 {
			var ns []string
			for _, v := range p.InExperiment(e) {
				ns = append(ns, v.Name)
			}
			which = ", configurations " + strings.Join(ns, ", ")
		}
		fmt.Fprintf(w, "bench: experiment %s: %d run(s) × %d call(s) × %d goroutine(s), depth %d, method time %v, warm-up %.0f%%%s\n",
			e.Name, q.Runs, q.Calls, q.Goroutines, q.Depth, q.MethodTime, 100*q.Warmup, which)
	}
	for _, v := range p.Variants {
		if v.Calls > 0 {
			fmt.Fprintf(w, "bench: %s makes at most %d call(s) per run and goroutine\n", v.Name, v.Calls)
		}
	}
	// 100 ns per monitored call is about a tigris fine record; the peer costs
	// more, which the progress lines' estimates take into account once it ran.
	fmt.Fprintf(w, "bench: the runs take at least %v, plus the builds\n", p.Estimate(100*time.Nanosecond).Round(time.Second))
	if load := LoadAverage(); load > float64(runtime.NumCPU()) {
		fmt.Fprintf(w, "bench: warning: load average %.1f on %d CPU(s): the machine is busy, expect noisy means (medians hold up better)\n",
			load, runtime.NumCPU())
	}
}
