package realcode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Workload is the name of this workload in tigris bench --workload.
const Workload = "realcode"

// Build is one test binary a module's copy is built into.
type Build string

// The builds: each variant runs one of them.
const (
	BuildPlain   Build = "plain"   // go test -c
	BuildFloor   Build = "floor"   // the init config with monitor.floor: true
	BuildDefault Build = "default" // the config tigris init writes
	BuildAll     Build = "all"     // every function: monitor.inlinable: probe, monitor.small: probe
	// BuildFloorAll is the all build's selection with monitor.floor: true.
	BuildFloorAll Build = "floor-all"
)

// Variant is one configuration a round runs: a build and the mode its probes
// start in (TIGRIS_MODE; none for the plain build).
type Variant struct {
	Name  string `json:"name"`
	Build Build  `json:"build"`
	Mode  string `json:"mode,omitempty"`
	What  string `json:"what"`
}

// Variants are every configuration, in table order; plain is the one the
// others are measured against.
var Variants = []Variant{
	{"plain", BuildPlain, "", "go test -c: no tigris"},
	{"floor", BuildFloor, "off", "every probe a load, a branch and a cold call of an empty function (monitor.floor), off"},
	{"off", BuildDefault, "off", "the config tigris init writes, probes off"},
	{"default", BuildDefault, "coarse", "the config tigris init writes, as written: coarse"},
	{"floor-all", BuildFloorAll, "off", "every function probed (inlinable and small ones too), each probe the floor (monitor.floor), off"},
	{"off-all", BuildAll, "off", "every function probed (inlinable and small ones too), off"},
	{"coarse-all", BuildAll, "coarse", "every function probed, coarse"},
	{"fine-all", BuildAll, "fine", "every function probed, fine: a record per call to a trace file"},
}

// Plan is what one run of the workload measures.
type Plan struct {
	Name    string   `json:"name"`
	Modules []Module `json:"modules"`
	// Variants run in every round, plain always among them.
	Variants []Variant `json:"variants"`
	// Rounds: each runs every module's every variant once.
	Rounds int `json:"rounds"`
	// BenchTime is -test.benchtime of every run; FineBenchTime that of
	// fine-all (its trace files grow with the calls).
	BenchTime     time.Duration `json:"benchTimeNs"`
	FineBenchTime time.Duration `json:"fineBenchTimeNs"`
	// Pause is idle time before every run.
	Pause time.Duration `json:"pauseNs,omitempty"`
	// ProfileTime is -test.benchtime of the run of the plain build with
	// -test.cpuprofile that gives each module's Shares; 0 runs none.
	ProfileTime time.Duration `json:"profileTimeNs,omitempty"`
}

// TinyPlan is the smoke test of CI: two small modules, a few benchmarks each,
// two rounds of very short runs.
func TinyPlan() Plan {
	var ms []Module
	for _, name := range tinyModules {
		m, _ := moduleNamed(name)
		if len(m.Tiny) > 0 {
			m.Bench = m.Tiny
		}
		ms = append(ms, m)
	}
	return Plan{Name: "tiny", Modules: ms, Variants: slices.Clone(Variants), Rounds: 2,
		BenchTime: 10 * time.Millisecond, FineBenchTime: 5 * time.Millisecond, ProfileTime: 200 * time.Millisecond}
}

// QuickPlan is the default: every module, five rounds.
func QuickPlan() Plan {
	return Plan{Name: "quick", Modules: slices.Clone(Modules), Variants: slices.Clone(Variants), Rounds: 5,
		BenchTime: 100 * time.Millisecond, FineBenchTime: 50 * time.Millisecond, ProfileTime: 500 * time.Millisecond}
}

// FullPlan is every module, ten rounds of longer runs.
func FullPlan() Plan {
	return Plan{Name: "full", Modules: slices.Clone(Modules), Variants: slices.Clone(Variants), Rounds: 10,
		BenchTime: 300 * time.Millisecond, FineBenchTime: 100 * time.Millisecond, ProfileTime: 2 * time.Second}
}

// PlanNamed returns the plan tiny, quick or full.
func PlanNamed(name string) (Plan, error) {
	switch name {
	case "tiny":
		return TinyPlan(), nil
	case "quick", "":
		return QuickPlan(), nil
	case "full":
		return FullPlan(), nil
	}
	return Plan{}, fmt.Errorf("no plan %q (want tiny, quick or full)", name)
}

// OnlyModules keeps the named modules of Modules (a tiny plan's selections
// where it has them), in table order.
func (p Plan) OnlyModules(names ...string) (Plan, error) {
	var ms []Module
	for _, n := range names {
		m, ok := moduleNamed(n)
		if !ok {
			var all []string
			for _, m := range Modules {
				all = append(all, m.Name)
			}
			return p, fmt.Errorf("no module %q (want %s)", n, strings.Join(all, ", "))
		}
		for _, have := range p.Modules {
			if have.Name == n {
				m = have
			}
		}
		ms = append(ms, m)
	}
	slices.SortStableFunc(ms, func(a, b Module) int { return moduleIndex(a.Name) - moduleIndex(b.Name) })
	p.Modules = slices.CompactFunc(ms, func(a, b Module) bool { return a.Name == b.Name })
	return p, nil
}

// OnlyVariants keeps the named variants and plain, in table order.
func (p Plan) OnlyVariants(names ...string) (Plan, error) {
	keep := map[string]bool{"plain": true}
	for _, n := range names {
		if variantIndex(n) < 0 {
			var all []string
			for _, v := range Variants {
				all = append(all, v.Name)
			}
			return p, fmt.Errorf("no variant %q (want %s)", n, strings.Join(all, ", "))
		}
		keep[n] = true
	}
	p.Variants = slices.DeleteFunc(slices.Clone(p.Variants), func(v Variant) bool { return !keep[v.Name] })
	return p, nil
}

// Validate checks that the plan can run.
func (p Plan) Validate() error {
	var errs []error
	if len(p.Modules) == 0 {
		errs = append(errs, errors.New("no module"))
	}
	if p.Rounds < 1 {
		errs = append(errs, fmt.Errorf("%d rounds: want at least 1", p.Rounds))
	}
	if p.BenchTime <= 0 || p.FineBenchTime <= 0 {
		errs = append(errs, errors.New("the bench times must be positive"))
	}
	if p.Pause < 0 || p.ProfileTime < 0 {
		errs = append(errs, errors.New("the pause and the profile time must not be negative"))
	}
	if !slices.ContainsFunc(p.Variants, func(v Variant) bool { return v.Name == "plain" }) {
		errs = append(errs, errors.New("no plain variant to measure against"))
	}
	for _, m := range p.Modules {
		if len(m.Bench) == 0 {
			errs = append(errs, fmt.Errorf("module %s selects no benchmark", m.Name))
		}
	}
	return errors.Join(errs...)
}

// builds are the builds the plan's variants need, in table order.
func (p Plan) builds() []Build {
	var out []Build
	for _, v := range p.Variants {
		if !slices.Contains(out, v.Build) {
			out = append(out, v.Build)
		}
	}
	return out
}

// order is the order of the plan's variants in round r for the module at
// index m: the table order rotated by r+m, so that every variant runs in
// every position as the rounds go on and no variant always follows another
// build's warm caches.
func (p Plan) order(r, m int) []Variant {
	n := len(p.Variants)
	out := make([]Variant, n)
	for i := range n {
		out[i] = p.Variants[(i+r+m)%n]
	}
	return out
}

func moduleIndex(name string) int {
	return slices.IndexFunc(Modules, func(m Module) bool { return m.Name == name })
}

func variantIndex(name string) int {
	return slices.IndexFunc(Variants, func(v Variant) bool { return v.Name == name })
}
