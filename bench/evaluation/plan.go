package evaluation

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Workload names the evaluation in a summary.json, as `tigris bench
// --workload` does.
const Workload = "petclinic"

// The paper's filters (Table 12) need a metric for usage-pattern, which tigris
// does not estimate. The restricted filter is the paper's running example
// (§4.1); the expanded one widens each of its terms by the next partition
// towards the middle, as Table 12's expanded filter widens its restricted one.
const (
	DefaultRestricted = "(more frequent ∪ most expensive) ∩ least changeable"
	DefaultExpanded   = "(more frequent ∪ frequent ∪ more expensive) ∩ less changeable"
)

// DefaultSampling are the paper's sampling rates of the two-phase
// configurations, in percent.
var DefaultSampling = []float64{100, 50, 25, 10, 5, 1}

// Plan is what one evaluation runs. A plan from TinyPlan, QuickPlan or
// FullPlan has no configurations yet: change its fields, then fill Configs
// with Configs (and Only) and check it with Validate.
type Plan struct {
	Name       string            `json:"name"`
	Runs       int               `json:"runs"`
	Warmup     settings.Duration `json:"warmup"`
	Duration   settings.Duration `json:"duration"`
	Interval   settings.Duration `json:"interval"`
	Pause      settings.Duration `json:"pause"`
	Sampling   []float64         `json:"samplingPercent"`
	Restricted string            `json:"restricted"`
	Expanded   string            `json:"expanded"`
	Seed       uint64            `json:"seed"`
	ThinkTime  string            `json:"thinkTime"`
	Users      string            `json:"users"`
	// ShiftCycles is how many analysis intervals the shift configurations
	// load the service with each navigation pattern: the first pattern, then
	// the second.
	ShiftCycles int      `json:"shiftCycles,omitempty"`
	Configs     []Config `json:"configs"`
}

func dur(d time.Duration) settings.Duration { return settings.Duration(d) }

func basePlan(name string, runs int, warmup, duration, interval time.Duration, sampling []float64) Plan {
	return Plan{Name: name, Runs: runs, Warmup: dur(warmup), Duration: dur(duration), Interval: dur(interval),
		Sampling: slices.Clone(sampling), Restricted: DefaultRestricted, Expanded: DefaultExpanded,
		Seed: 1, ThinkTime: "none", Users: "5–20", ShiftCycles: 4}
}

// TinyPlan is a smoke test: 1 run of 1.5 s after 2 s, analysis every 500 ms,
// sampling 100 and 1 %.
func TinyPlan() Plan {
	return basePlan("tiny", 1, 2*time.Second, 1500*time.Millisecond, 500*time.Millisecond, []float64{100, 1})
}

// QuickPlan checks that everything works: 3 runs of 1.5 s after 2 s,
// analysis every second, sampling 100, 10 and 1 %; about six minutes on two
// CPUs, builds included.
func QuickPlan() Plan {
	return basePlan("quick", 3, 2*time.Second, 1500*time.Millisecond, time.Second, []float64{100, 10, 1})
}

// FullPlan is the evaluation: 12 runs of 3 s after 3 s, analysis every
// second, the paper's six sampling rates; about 35 minutes on two CPUs, builds included.
func FullPlan() Plan {
	return basePlan("full", 12, 3*time.Second, 3*time.Second, time.Second, DefaultSampling)
}

// Kinds of configuration.
const (
	KindNone       = "none"
	KindPhase1     = "phase1"
	KindFull       = "full"
	KindRestricted = "restricted"
	KindExpanded   = "expanded"
	// The cost of a query (docs/queries.md): the tigris build with every
	// probe off, the same with one query watching one function with a
	// pushed-down threshold, and that function in fine mode instead.
	KindOff     = "off"
	KindQuery   = "query"
	KindFineOne = "fine-one"
	// The selection's quality: a complete fine trace of the workload, the
	// ground truth of the filters (tigris analyze's analysis of it), and a
	// two-phase run whose load switches navigation pattern in the middle.
	KindTruth = "truth"
	KindShift = "shift"
)

// The navigation patterns of the shift configurations: the visitors first,
// then the front desk.
var (
	ShiftFrom = []string{"browse"}
	ShiftTo   = []string{"maintenance"}
)

// WatchedFunction is the function the query configurations watch: the owner
// search, a repository method every "find owners" request calls.
const WatchedFunction = "github.com/tigrisgo/tigris/examples/petclinic/internal/repository.(*OwnerRepository).FindByLastName"

// WatchQuery is the query of the query configuration: the slow calls of
// WatchedFunction, counted each second. Only that probe is switched on
// (coarse), and only its calls over 5 ms reach the query.
const WatchQuery = "SELECT function, count(*) AS slow, max(duration) FROM calls WHERE function = '" + WatchedFunction + "' AND duration > 5ms GROUP BY function WINDOW 1s"

// Config is one configuration: how the service is built and started.
type Config struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Scope names the tigris build the configuration runs (Scopes); "" for
	// the plain build.
	Scope    string   `json:"scope,omitempty"`
	Filter   string   `json:"filter,omitempty"`
	Sampling float64  `json:"samplingPercent,omitempty"`
	Env      []string `json:"env,omitempty"` // besides TIGRIS_ADMIN and TIGRIS_OUT
	// Query is posted (detached) after the warm-up and runs through the
	// measured window.
	Query string `json:"query,omitempty"`
	// Patterns are the navigation patterns of the load (all when empty);
	// a shift configuration switches to Then after Plan.ShiftCycles
	// intervals.
	Patterns []string `json:"patterns,omitempty"`
	Then     []string `json:"then,omitempty"`
	// Once runs the configuration in the first round only (the shift and
	// its ground truths: their traces and cycles are analyzed, not their
	// cost).
	Once bool `json:"once,omitempty"`
}

// Plain reports whether c runs the plain build, without monitoring.
func (c *Config) Plain() bool { return c.Kind == KindNone }

// TwoPhase reports whether c runs the analyzer.
func (c *Config) TwoPhase() bool {
	return c.Kind == KindRestricted || c.Kind == KindExpanded || c.Kind == KindShift
}

// Costed reports whether c's cost is part of the results table (the truth
// runs' is not: they record result sizes).
func (c *Config) Costed() bool { return c.Kind != KindTruth && c.Kind != KindShift }

// CheckFilter reports whether text is a TigrisDSL filter the analyzer takes.
func CheckFilter(text string) error {
	_, err := analyzer.Evaluate(nil, settings.Analysis{Criteria: text})
	return err
}

// metricsEnv binds the paper's metrics (Table 9): invocation frequency,
// execution time, computation pattern.
const metricsEnv = "TIGRIS_METRICS=frequent=count,expensive=mean-time,changeable=result-size-sd"

// Configs lists p's configurations: first the paper's Fig. 4 on the module
// scope (none, phase 1, full, the two filters at each sampling rate), the
// cost of a query, then phase 1 and full on the narrow and the dependency
// scopes and the expanded filter at 10 % on the latter, then the ground
// truth and the shift runs.
func Configs(p Plan) []Config {
	// TIGRIS_RULES=none: only the mode and the analyzer decide, whatever
	// tigris.yaml's rules say.
	common := []string{"TIGRIS_RULES=none", "TIGRIS_BUDGET=off", "TIGRIS_WRITER=async"}
	phase1 := append(slices.Clone(common), "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=off")
	full := append(slices.Clone(common), "TIGRIS_MODE=fine", "TIGRIS_ANALYSIS=off", "TIGRIS_SAMPLING=100%")
	off := append(slices.Clone(common), "TIGRIS_MODE=off", "TIGRIS_ANALYSIS=off")
	twoPhase := func(filter string, s float64) []string {
		return append(slices.Clone(common), "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on",
			"TIGRIS_CRITERIA="+filter, metricsEnv,
			"TIGRIS_INTERVAL="+p.Interval.String(), "TIGRIS_WINDOW=0s",
			fmt.Sprintf("TIGRIS_SAMPLING=%g%%", s))
	}
	cs := []Config{
		{Name: "none", Kind: KindNone, Label: "no monitoring"},
		{Name: "phase1", Kind: KindPhase1, Scope: ScopeModule, Label: "phase 1 only", Env: phase1},
		{Name: "full", Kind: KindFull, Scope: ScopeModule, Label: "full monitoring", Sampling: 100, Env: full},
		{Name: "off", Kind: KindOff, Scope: ScopeModule, Label: "probes off", Env: off},
		{Name: "query", Kind: KindQuery, Scope: ScopeModule, Label: "one query, threshold pushed down", Env: off, Query: WatchQuery},
		{Name: "fine-one", Kind: KindFineOne, Scope: ScopeModule, Label: "the same function fine", Sampling: 100,
			Env: append(slices.Clone(off), "TIGRIS_RULES=fine:execution(* "+WatchedFunction+"(..))", "TIGRIS_SAMPLING=100%")},
	}
	for _, k := range []struct{ kind, label, filter string }{
		{KindRestricted, "restricted filter", p.Restricted},
		{KindExpanded, "expanded filter", p.Expanded},
	} {
		for _, s := range p.Sampling {
			cs = append(cs, Config{Name: fmt.Sprintf("%s-%g", k.kind, s), Kind: k.kind, Scope: ScopeModule,
				Label: k.label, Filter: k.filter, Sampling: s, Env: twoPhase(k.filter, s)})
		}
	}
	for _, sc := range []string{ScopeNarrow, ScopeDeps} {
		cs = append(cs,
			Config{Name: sc + "-phase1", Kind: KindPhase1, Scope: sc, Label: "phase 1 only", Env: phase1},
			Config{Name: sc + "-full", Kind: KindFull, Scope: sc, Label: "full monitoring", Sampling: 100, Env: full})
	}
	cs = append(cs, Config{Name: "deps-expanded-10", Kind: KindExpanded, Scope: ScopeDeps, Label: "expanded filter",
		Filter: p.Expanded, Sampling: 10, Env: twoPhase(p.Expanded, 10)})
	// The ground truth: every call of the module traced with its result's
	// size (what the changeable criterion reads), under the steady load in
	// every round (the two-phase runs of a round are judged against its
	// truth: the same simulated users), and under each pattern of the shift
	// alone, once, as the shift runs.
	truth := append(slices.Clone(full), "TIGRIS_SUMMARIES=on")
	cs = append(cs,
		Config{Name: "truth", Kind: KindTruth, Scope: ScopeModule, Label: "ground truth, steady load", Sampling: 100, Env: truth},
		Config{Name: "truth-" + strings.Join(ShiftFrom, "+"), Kind: KindTruth, Scope: ScopeModule, Label: "ground truth, first pattern",
			Sampling: 100, Env: truth, Once: true, Patterns: ShiftFrom},
		Config{Name: "truth-" + strings.Join(ShiftTo, "+"), Kind: KindTruth, Scope: ScopeModule, Label: "ground truth, second pattern",
			Sampling: 100, Env: truth, Once: true, Patterns: ShiftTo})
	for _, k := range []struct{ name, filter string }{{"restricted", p.Restricted}, {"expanded", p.Expanded}} {
		cs = append(cs, Config{Name: "shift-" + k.name, Kind: KindShift, Scope: ScopeModule,
			Label: k.name + " filter, load switching pattern", Filter: k.filter, Sampling: 10,
			Env: twoPhase(k.filter, 10), Patterns: ShiftFrom, Then: ShiftTo, Once: true})
	}
	return cs
}

// Only returns p with only the named configurations, in the order named
// (a name given twice runs once).
func (p Plan) Only(names ...string) (Plan, error) {
	var keep []Config
	for _, name := range names {
		i := slices.IndexFunc(p.Configs, func(c Config) bool { return c.Name == name })
		if i < 0 {
			have := make([]string, len(p.Configs))
			for j, c := range p.Configs {
				have[j] = c.Name
			}
			return p, fmt.Errorf("no configuration %q (have %s)", name, strings.Join(have, ", "))
		}
		if !slices.ContainsFunc(keep, func(c Config) bool { return c.Name == name }) {
			keep = append(keep, p.Configs[i])
		}
	}
	p.Configs = keep
	return p, nil
}

// Validate checks what a run needs of p: configurations, and a warm-up longer
// than the analysis interval when the analyzer runs.
func (p Plan) Validate() error {
	if len(p.Configs) == 0 {
		return fmt.Errorf("plan %q: no configurations", p.Name)
	}
	if p.Runs < 1 || p.Duration <= 0 || p.Warmup < 0 || p.Interval <= 0 || p.Pause < 0 {
		return fmt.Errorf("plan %q: want at least one run, a duration and an interval, and no negative time", p.Name)
	}
	if slices.ContainsFunc(p.Configs, func(c Config) bool { return c.TwoPhase() }) && p.Warmup <= p.Interval {
		return fmt.Errorf("the warm-up (%s) must be longer than the analysis interval (%s): the measured window starts after a cycle", p.Warmup, p.Interval)
	}
	for _, c := range p.Configs {
		if _, ok := scopeByName(c.Scope); c.Scope != "" && !ok || c.Scope == "" && !c.Plain() {
			return fmt.Errorf("configuration %s: no scope %q", c.Name, c.Scope)
		}
		if c.Kind == KindShift && p.ShiftCycles < 1 {
			return fmt.Errorf("configuration %s: the plan's shift cycles are %d, want at least 1", c.Name, p.ShiftCycles)
		}
	}
	return nil
}
