package main

// tigris bench --workload petclinic: the Tigris paper's evaluation (Mertz &
// Nunes, JSS 2021, §6.2.1, Fig. 4) on the example service.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/bench"
	"github.com/tigrisgo/tigris/loadgen"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Workloads of tigris bench.
const (
	workloadMooBench  = "moobench"
	workloadPetclinic = "petclinic"
)

const evalHelp = `

--workload petclinic measures instead what the Tigris paper's evaluation
measured (Mertz & Nunes, JSS 2021, section 6.2.1, Fig. 4): the throughput of a
web service under load, examples/petclinic here, in fresh processes and
interleaved repetitions of these configurations:

  none              go build: no monitoring
  phase1            tigris go build, every probe coarse, no analysis (phase 1 only)
  full              every probe fine, sampling 100 %, async writer to a file
  restricted-<s>    two-phase: coarse, and every --interval the analyzer traces
                    what --restricted selects in fine mode at sampling <s> %
  expanded-<s>      the same with --expanded
                    (s = --sampling: 100, 50, 25, 10, 5 and 1 by default)

The load generator (package loadgen, the paper's workload) runs in this process
against the service on a loopback port: 5 to 20 users following three
navigation patterns, without think time, so the service is saturated and
throughput is its capacity. Both share the machine: with N CPUs the service
gets less than N. Every run loads the service for --warmup-time (for two-phase,
until at least one analysis cycle has happened), then measures the throughput
of the next --duration.

Plans (per configuration):
  --tiny    1 run of 1.5 s after 2 s, sampling 100 and 1 %: a smoke test
  --quick   1 run of 4 s after 4 s, analysis every 1 s (the default; about
            three minutes, builds included)
  --full    5 runs of 9 s after 5 s, analysis every 2 s: the evaluation,
            about 18 minutes
--runs, --duration, --warmup-time, --interval, --sampling, --restricted,
--expanded, --seed and --only (configuration names) override them.

Results go to --out (default petclinic-results/<plan>-<time>): summary.json
(plan, machine, every run, every configuration's mean throughput with its 95 %
confidence interval and its ratio to no monitoring), table.txt (also on
standard output) and throughput.svg (the chart of the paper's Fig. 4).`

// The paper's filters (Table 12) need a metric for usage-pattern, which tigris
// does not estimate. The restricted filter is the paper's running example
// (§4.1); the expanded one widens each of its terms by the next partition
// towards the middle, as Table 12's expanded filter widens its restricted one.
const (
	defaultRestricted = "(more frequent ∪ most expensive) ∩ least changeable"
	defaultExpanded   = "(more frequent ∪ frequent ∪ more expensive) ∩ less changeable"
)

var defaultSampling = []float64{100, 50, 25, 10, 5, 1}

// evalOptions are the flags only --workload petclinic takes.
type evalOptions struct {
	duration, warmup, interval time.Duration
	restricted, expanded       string
	sampling                   []float64
	seed                       uint64
}

// evalFlags are those flags' names; mooBenchOnly the bench flags petclinic
// does not take.
var (
	evalFlags    = []string{"duration", "warmup-time", "interval", "restricted", "expanded", "sampling", "seed"}
	mooBenchOnly = []string{"calls", "depth", "goroutines", "warmup", "method-time", "blocking", "raw-csv"}
)

// registerWorkload adds --workload and the flags of --workload petclinic.
func (o *benchOptions) registerWorkload(cmd *cobra.Command) {
	f := cmd.Flags()
	e := &o.eval
	f.StringVar(&o.workload, "workload", workloadMooBench, "what to measure: moobench (the overhead per call) or petclinic (service throughput, the paper's Fig. 4)")
	f.DurationVar(&e.duration, "duration", 0, "petclinic: measured load per run")
	f.DurationVar(&e.warmup, "warmup-time", 0, "petclinic: load before the measured window of every run")
	f.DurationVar(&e.interval, "interval", 0, "petclinic: analysis interval of the two-phase configurations")
	f.StringVar(&e.restricted, "restricted", defaultRestricted, "petclinic: the restricted TigrisDSL filter")
	f.StringVar(&e.expanded, "expanded", defaultExpanded, "petclinic: the expanded TigrisDSL filter")
	f.Float64SliceVar(&e.sampling, "sampling", defaultSampling, "petclinic: sampling rates of the two-phase configurations, in percent")
	f.Uint64Var(&e.seed, "seed", 1, "petclinic: seed of the simulated users (run r uses seed + 1000·r)")
}

// runWorkload runs the petclinic evaluation when --workload asks for it and
// reports done; for MooBench it only checks that no petclinic flag was given.
func (o *benchOptions) runWorkload(ctx context.Context, stdout, stderr io.Writer) (done bool, err error) {
	given := func(names []string) []string {
		var out []string
		for _, n := range names {
			if o.changed != nil && o.changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	switch o.workload {
	case workloadMooBench:
		if g := given(evalFlags); len(g) > 0 {
			return true, fmt.Errorf("%s only apply to --workload petclinic", strings.Join(g, ", "))
		}
		return false, nil
	case workloadPetclinic:
		if g := given(mooBenchOnly); len(g) > 0 {
			return true, fmt.Errorf("--workload petclinic does not take %s", strings.Join(g, ", "))
		}
		if o.from != "" {
			if g := given(append(slices.Clone(planFlags), evalFlags...)); len(g) > 0 {
				return true, fmt.Errorf("--from summarizes earlier results; it does not take %s", strings.Join(g, ", "))
			}
			return true, summarizeEvalAgain(o.from, stdout, stderr)
		}
		return true, o.runPetclinic(ctx, stdout, stderr)
	}
	return true, fmt.Errorf("--workload %q: want %s or %s", o.workload, workloadMooBench, workloadPetclinic)
}

// evalPlan is what one petclinic evaluation runs.
type evalPlan struct {
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
	Configs    []evalConfig      `json:"configs"`
}

// Kinds of configuration.
const (
	kindNone       = "none"
	kindPhase1     = "phase1"
	kindFull       = "full"
	kindRestricted = "restricted"
	kindExpanded   = "expanded"
)

// evalConfig is one configuration: how the service is built and started.
type evalConfig struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Label    string   `json:"label"`
	Filter   string   `json:"filter,omitempty"`
	Sampling float64  `json:"samplingPercent,omitempty"`
	Env      []string `json:"env,omitempty"` // besides TIGRIS_ADMIN and TIGRIS_OUT
}

func (c *evalConfig) plain() bool    { return c.Kind == kindNone }
func (c *evalConfig) twoPhase() bool { return c.Kind == kindRestricted || c.Kind == kindExpanded }

// evalPlanFor builds the plan the flags ask for and validates it.
func (o *benchOptions) evalPlanFor() (evalPlan, error) {
	p := evalPlan{Runs: 1, Seed: o.eval.seed, ThinkTime: "none", Users: "5–20",
		Restricted: strings.TrimSpace(o.eval.restricted), Expanded: strings.TrimSpace(o.eval.expanded)}
	set := 0
	for _, b := range []bool{o.quick, o.full, o.tiny} {
		if b {
			set++
		}
	}
	sampling := slices.Clone(o.eval.sampling)
	switch {
	case set > 1:
		return p, errors.New("--quick, --full and --tiny exclude each other")
	case o.tiny:
		p.Name, p.Runs, p.Warmup, p.Duration, p.Interval = "tiny", 1, dur(2*time.Second), dur(1500*time.Millisecond), dur(500*time.Millisecond)
		if o.changed == nil || !o.changed("sampling") {
			sampling = []float64{100, 1}
		}
	case o.full:
		p.Name, p.Runs, p.Warmup, p.Duration, p.Interval = "full", 5, dur(5*time.Second), dur(9*time.Second), dur(2*time.Second)
	default:
		p.Name, p.Runs, p.Warmup, p.Duration, p.Interval = "quick", 1, dur(4*time.Second), dur(4*time.Second), dur(time.Second)
	}
	if o.runs < 0 || o.eval.duration < 0 || o.eval.warmup < 0 || o.eval.interval < 0 || o.pause < 0 {
		return p, errors.New("--runs, --duration, --warmup-time, --interval and --pause must not be negative")
	}
	if o.runs > 0 {
		p.Runs = o.runs
	}
	if o.eval.duration > 0 {
		p.Duration = dur(o.eval.duration)
	}
	if o.eval.warmup > 0 {
		p.Warmup = dur(o.eval.warmup)
	}
	if o.eval.interval > 0 {
		p.Interval = dur(o.eval.interval)
	}
	p.Pause = dur(o.pause)
	seen := map[float64]bool{}
	for _, s := range sampling {
		if !(s > 0 && s <= 100) {
			return p, fmt.Errorf("--sampling %v: want percentages in (0, 100]", s)
		}
		if seen[s] {
			return p, fmt.Errorf("--sampling %v: duplicated", s)
		}
		seen[s] = true
	}
	p.Sampling = sampling
	for _, f := range []struct{ flag, text string }{{"--restricted", p.Restricted}, {"--expanded", p.Expanded}} {
		if _, err := analyzer.Evaluate(nil, settings.Analysis{Criteria: f.text}); err != nil {
			return p, fmt.Errorf("%s %q: %w", f.flag, f.text, err)
		}
	}
	p.Configs = evalConfigs(p)
	if len(o.only) > 0 {
		var keep []evalConfig
		for _, name := range o.only {
			i := slices.IndexFunc(p.Configs, func(c evalConfig) bool { return c.Name == name })
			if i < 0 {
				names := make([]string, len(p.Configs))
				for j, c := range p.Configs {
					names[j] = c.Name
				}
				return p, fmt.Errorf("--only: no configuration %q (have %s)", name, strings.Join(names, ", "))
			}
			if !slices.ContainsFunc(keep, func(c evalConfig) bool { return c.Name == name }) {
				keep = append(keep, p.Configs[i])
			}
		}
		p.Configs = keep
	}
	if slices.ContainsFunc(p.Configs, func(c evalConfig) bool { return c.twoPhase() }) && p.Warmup <= p.Interval {
		return p, fmt.Errorf("the warm-up (%s) must be longer than the analysis interval (%s): the measured window starts after a cycle", p.Warmup, p.Interval)
	}
	return p, nil
}

func dur(d time.Duration) settings.Duration { return settings.Duration(d) }

// evalConfigs lists p's configurations, in the order of the paper's Fig. 4.
func evalConfigs(p evalPlan) []evalConfig {
	// TIGRIS_RULES=none: only the mode and the analyzer decide, whatever
	// tigris.yaml's rules say. The metrics are the paper's (Table 9):
	// invocation frequency, execution time, computation pattern.
	common := []string{"TIGRIS_RULES=none", "TIGRIS_BUDGET=off", "TIGRIS_WRITER=async"}
	cs := []evalConfig{
		{Name: "none", Kind: kindNone, Label: "no monitoring"},
		{Name: "phase1", Kind: kindPhase1, Label: "phase 1 only",
			Env: append(slices.Clone(common), "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=off")},
		{Name: "full", Kind: kindFull, Label: "full monitoring", Sampling: 100,
			Env: append(slices.Clone(common), "TIGRIS_MODE=fine", "TIGRIS_ANALYSIS=off", "TIGRIS_SAMPLING=100%")},
	}
	for _, k := range []struct{ kind, label, filter string }{
		{kindRestricted, "restricted filter", p.Restricted},
		{kindExpanded, "expanded filter", p.Expanded},
	} {
		for _, s := range p.Sampling {
			cs = append(cs, evalConfig{
				Name: fmt.Sprintf("%s-%g", k.kind, s), Kind: k.kind, Label: k.label, Filter: k.filter, Sampling: s,
				Env: append(slices.Clone(common), "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on",
					"TIGRIS_CRITERIA="+k.filter,
					"TIGRIS_METRICS=frequent=count,expensive=mean-time,changeable=result-size-sd",
					"TIGRIS_INTERVAL="+p.Interval.String(), "TIGRIS_WINDOW=0s",
					fmt.Sprintf("TIGRIS_SAMPLING=%g%%", s)),
			})
		}
	}
	return cs
}

// evalRun is what one run of one configuration measured.
type evalRun struct {
	Config string `json:"config"`
	Run    int    `json:"run"`
	// Throughput is the completed requests per second of the measured window.
	Throughput float64 `json:"throughput"`
	Requests   int64   `json:"requests"`
	Seconds    float64 `json:"seconds"`
	Errors     int64   `json:"errors"`   // answered with a status outside 2xx
	NoAnswer   int64   `json:"noAnswer"` // no complete answer
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	// WarmupRequests were completed before the window.
	WarmupRequests int64 `json:"warmupRequests"`
	// ServerCPUSeconds is the service's user and system CPU time over its whole
	// life (start, warm-up, window, shutdown).
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	// MonitoredCalls are the probes' completed calls in the window; Records the
	// fine records produced in it (written, queued or dropped), Dropped those
	// the writer dropped. TraceBytes is the size of the trace file at the end.
	MonitoredCalls uint64 `json:"monitoredCalls,omitempty"`
	Records        uint64 `json:"records,omitempty"`
	Dropped        uint64 `json:"dropped,omitempty"`
	TraceBytes     int64  `json:"traceBytes,omitempty"`
	// CyclesBefore counts the analysis cycles before the window; Cycles are
	// those during it.
	CyclesBefore int         `json:"cyclesBefore,omitempty"`
	Cycles       []evalCycle `json:"cycles,omitempty"`
	// Selected is the selection in force at the end of the window.
	Selected []string `json:"selected,omitempty"`
	LoadAvg  float64  `json:"loadAvg"` // 1-minute load average before the run
	// OtherCPUSeconds is the CPU time the rest of the machine used during the
	// run: all processes but the service and this one (Linux only; 0
	// elsewhere). On a quiet machine it is near 0.
	OtherCPUSeconds float64 `json:"otherCPUSeconds"`
}

// evalCycle summarizes one analysis cycle.
type evalCycle struct {
	Candidates int `json:"candidates"`
	Selected   int `json:"selected"`
	Added      int `json:"added"`
	Removed    int `json:"removed"`
}

// evalConfigSummary is one configuration over its runs.
type evalConfigSummary struct {
	evalConfig
	Runs       int       `json:"runs"`
	PerRun     []float64 `json:"throughputPerRun"`
	Throughput float64   `json:"throughput"` // mean req/s
	CI95       float64   `json:"ci95"`
	StdDev     float64   `json:"stddev"`
	// Ratio is Throughput over the no-monitoring mean, with its 95 % interval;
	// Overhead is 1 − Ratio. All three are left out (0) when the plan has no
	// no-monitoring configuration.
	Ratio    float64 `json:"ratio,omitempty"`
	RatioCI  float64 `json:"ratioCI95,omitempty"`
	Overhead float64 `json:"overhead,omitempty"`
	// CPUPerRequestUs is the service's CPU time per completed request over its
	// whole life (warm-up and window), a measure less sensitive to the load
	// generator sharing the machine.
	CPUPerRequestUs float64 `json:"cpuPerRequestUs"`
	CallsPerRequest float64 `json:"monitoredCallsPerRequest"`
	RecordsPerSec   float64 `json:"recordsPerSecond"`
	DroppedShare    float64 `json:"droppedShare"`
	// Selected is the mean number of functions selected per cycle in the
	// windows, of Candidates; SelectedFuncs every function selected at the end
	// of a window, with in how many runs.
	Selected      float64        `json:"selected,omitempty"`
	Candidates    float64        `json:"candidates,omitempty"`
	SelectedFuncs map[string]int `json:"selectedFunctions,omitempty"`
	ErrorShare    float64        `json:"errorShare"`
	NoAnswer      int64          `json:"noAnswer"`
}

// evalSummary is the report of an evaluation, summary.json.
type evalSummary struct {
	Workload string              `json:"workload"`
	Plan     evalPlan            `json:"plan"`
	Env      bench.Environment   `json:"env"`
	Started  time.Time           `json:"started"`
	Ended    time.Time           `json:"ended"`
	Builds   []bench.BuildResult `json:"builds"`
	Complete bool                `json:"complete"` // every planned run ran
	Probes   int                 `json:"probes,omitempty"`
	Configs  []evalConfigSummary `json:"configs"`
	Runs     []evalRun           `json:"runs"`
}

// evaluation runs a plan.
type evaluation struct {
	plan     evalPlan
	example  string // examples/petclinic
	plainBin string
	tigBin   string
	scratch  string // parent of the runs' working directories
	keep     bool
	probes   int
}

func (o *benchOptions) runPetclinic(ctx context.Context, stdout, stderr io.Writer) error {
	p, err := o.evalPlanFor()
	if err != nil {
		return err
	}
	root, err := o.repoRoot()
	if err != nil {
		return err
	}
	example := filepath.Join(root, "examples", "petclinic")
	if !fileExists(filepath.Join(example, "go.mod")) {
		return fmt.Errorf("%s: no go.mod", example)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locating the tigris executable: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	out := o.out
	if out == "" {
		out = filepath.Join("petclinic-results", p.Name+"-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tigris-petclinic-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ev := &evaluation{plan: p, example: example, scratch: filepath.Join(tmp, "runs"), keep: o.keep}
	if o.keep {
		ev.scratch = filepath.Join(out, "scratch")
	}
	describeEvalPlan(stderr, p, out)

	sum := &evalSummary{Workload: workloadPetclinic, Plan: p, Env: bench.MachineEnvironment(), Started: time.Now()}
	for _, b := range []struct {
		name string
		need func(evalConfig) bool
		bin  *string
		argv []string
	}{
		{"plain", func(c evalConfig) bool { return c.plain() }, &ev.plainBin, []string{"go", "build"}},
		{"tigris", func(c evalConfig) bool { return !c.plain() }, &ev.tigBin, []string{self, "go", "build"}},
	} {
		if !slices.ContainsFunc(p.Configs, b.need) {
			continue
		}
		exe := filepath.Join(tmp, "petclinic-"+b.name)
		start := time.Now()
		cmd := exec.CommandContext(ctx, b.argv[0], append(b.argv[1:], "-o", exe, "./cmd/petclinic")...)
		cmd.Dir = example
		cmd.Env = demoBuildEnv()
		if err := runWithTicker(cmd, stderr, "building "+b.name); err != nil {
			return fmt.Errorf("building petclinic (%s): %w", b.name, err)
		}
		fi, err := os.Stat(exe)
		if err != nil {
			return err
		}
		*b.bin = exe
		sum.Builds = append(sum.Builds, bench.BuildResult{Binary: b.name, Duration: time.Since(start), Size: fi.Size()})
		fmt.Fprintf(stderr, "bench: built %s petclinic in %s (%s)\n", b.name, time.Since(start).Round(100*time.Millisecond), byteSize(fi.Size()))
	}

	total := p.Runs * len(p.Configs)
	var runErr error
	var took []time.Duration
	for rep := 1; rep <= p.Runs && runErr == nil; rep++ {
		order := slices.Clone(p.Configs)
		if rep%2 == 0 {
			// Every other round backwards, so no configuration always runs
			// after the same one or late in a round.
			slices.Reverse(order)
		}
		for _, c := range order {
			if p.Pause > 0 {
				select {
				case <-time.After(time.Duration(p.Pause)):
				case <-ctx.Done():
				}
			}
			start := time.Now()
			r, err := ev.runOnce(ctx, c, rep)
			if err != nil {
				runErr = fmt.Errorf("%s run %d: %w", c.Name, rep, err)
				break
			}
			took = append(took, time.Since(start))
			sum.Runs = append(sum.Runs, r)
			fmt.Fprintln(stderr, evalRunLine(&r, &c, len(sum.Runs), total, time.Since(sum.Started), took, p.Runs))
		}
	}
	sum.Ended = time.Now()
	sum.Complete = runErr == nil
	sum.Probes = ev.probes
	if len(sum.Runs) == 0 {
		return runErr
	}
	summarizeEval(sum)
	if err := writeEvalReport(out, sum); err != nil {
		return errors.Join(runErr, err)
	}
	if err := writeEvalTable(stdout, sum); err != nil {
		return errors.Join(runErr, err)
	}
	fmt.Fprintf(stderr, "bench: report in %s (table.txt, summary.json, throughput.svg)\n", out)
	if errors.Is(runErr, context.Canceled) {
		return errors.New("interrupted; the report holds the runs done")
	}
	return runErr
}

// summarizeEvalAgain is --from: the report of an earlier evaluation's
// summary.json, written again from its runs with this version's analysis.
func summarizeEvalAgain(dir string, stdout, stderr io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return err
	}
	var sum evalSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(dir, "summary.json"), err)
	}
	if sum.Workload != workloadPetclinic {
		return fmt.Errorf("%s: not a petclinic evaluation (workload %q)", filepath.Join(dir, "summary.json"), sum.Workload)
	}
	summarizeEval(&sum)
	if err := writeEvalReport(dir, &sum); err != nil {
		return err
	}
	if err := writeEvalTable(stdout, &sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: report in %s (table.txt, summary.json, throughput.svg)\n", dir)
	return nil
}

func describeEvalPlan(w io.Writer, p evalPlan, out string) {
	names := make([]string, len(p.Configs))
	for i, c := range p.Configs {
		names[i] = c.Name
	}
	fmt.Fprintf(w, "bench: petclinic plan %s, configurations %s; results in %s\n", p.Name, strings.Join(names, ", "), out)
	fmt.Fprintf(w, "bench: %d run(s) per configuration: %s of load, then %s measured; 5–20 users without think time; analysis every %s\n",
		p.Runs, p.Warmup, p.Duration, p.Interval)
	fmt.Fprintf(w, "bench: restricted filter %s; expanded filter %s\n", p.Restricted, p.Expanded)
	per := time.Duration(p.Warmup+p.Duration+p.Pause) + 1500*time.Millisecond
	fmt.Fprintf(w, "bench: the runs take about %s, plus the builds (the first tigris build recompiles the standard library: a minute or two)\n",
		(time.Duration(p.Runs*len(p.Configs)) * per).Round(time.Second))
	if load := bench.LoadAverage(); load > float64(runtime.NumCPU())/2 {
		fmt.Fprintf(w, "bench: warning: load average %.1f on %d CPU(s) before the start: something else is running, expect noisy results\n",
			load, runtime.NumCPU())
	}
}

func evalRunLine(r *evalRun, c *evalConfig, done, total int, elapsed time.Duration, took []time.Duration, runs int) string {
	var mean time.Duration
	for _, d := range took {
		mean += d
	}
	mean /= time.Duration(len(took))
	var b strings.Builder
	fmt.Fprintf(&b, "[%*d/%d %s, ETA %s] run %d/%d %s: %.1f req/s (%d requests, %d errors",
		len(strconv.Itoa(total)), done, total, fmtClock(elapsed), fmtClock(time.Duration(total-done)*mean), r.Run, runs, c.Name, r.Throughput, r.Requests, r.Errors)
	if r.NoAnswer > 0 {
		fmt.Fprintf(&b, ", %d without answer", r.NoAnswer)
	}
	b.WriteString(")")
	if !c.plain() {
		fmt.Fprintf(&b, "; %.1f monitored calls/request", float64(r.MonitoredCalls)/float64(max(r.Requests, 1)))
	}
	if c.twoPhase() {
		fmt.Fprintf(&b, "; %d cycle(s) before, %d in the window, %d selected at its end", r.CyclesBefore, len(r.Cycles), len(r.Selected))
	}
	if r.Records > 0 {
		fmt.Fprintf(&b, "; %d records, %d dropped", r.Records, r.Dropped)
	}
	fmt.Fprintf(&b, "; load %.1f, other processes %.1f CPU-s", r.LoadAvg, r.OtherCPUSeconds)
	return b.String()
}

// fmtClock formats d as m:ss.
func fmtClock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// runOnce starts a fresh service for c, loads it and measures one window.
func (ev *evaluation) runOnce(ctx context.Context, c evalConfig, rep int) (evalRun, error) {
	r := evalRun{Config: c.Name, Run: rep, LoadAvg: bench.LoadAverage()}
	busy0, self0 := machineCPU(), processCPU("self")
	dir := filepath.Join(ev.scratch, fmt.Sprintf("%s-run-%02d", c.Name, rep))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return r, err
	}
	if !ev.keep {
		defer os.RemoveAll(dir)
	}
	bin, env := ev.plainBin, slices.Clone(c.Env)
	if !c.plain() {
		bin = ev.tigBin
		env = append(env, "TIGRIS_ADMIN=127.0.0.1:0", "TIGRIS_OUT="+filepath.Join(dir, "petclinic.tgr"))
	}
	svc, err := startService(ctx, bin, dir, !c.plain(), env)
	if err != nil {
		return r, err
	}
	defer svc.kill()
	var a *ctl
	if !c.plain() {
		a = &ctl{addr: svc.admin, out: io.Discard, client: &http.Client{Timeout: 10 * time.Second}}
	}

	lo := loadgen.Options{BaseURL: svc.url, ThinkTime: -1, Seed: ev.plan.Seed + 1000*uint64(rep), Duration: time.Duration(ev.plan.Warmup)}
	ws, err := loadgen.Run(ctx, lo)
	if err != nil {
		return r, fmt.Errorf("warm-up: %w", err)
	}
	r.WarmupRequests = ws.Requests
	if c.twoPhase() {
		// The window starts after the first cycle: load on, one interval at a
		// time, for at most four more intervals.
		for extra := 0; ; extra++ {
			h, err := evalHistory(a)
			if err != nil {
				return r, err
			}
			if n := len(h.Cycles); n > 0 {
				if e := h.Cycles[n-1].Err; e != "" {
					return r, fmt.Errorf("analysis cycle failed: %s", e)
				}
				break
			}
			if extra == 4 {
				return r, fmt.Errorf("no analysis cycle within %s of load", time.Duration(ev.plan.Warmup)+4*time.Duration(ev.plan.Interval))
			}
			lo.Duration = time.Duration(ev.plan.Interval)
			s, err := loadgen.Run(ctx, lo)
			if err != nil {
				return r, fmt.Errorf("warm-up: %w", err)
			}
			r.WarmupRequests += s.Requests
		}
	}

	var before evalSnapshot
	if a != nil {
		if before, err = takeEvalSnapshot(a); err != nil {
			return r, err
		}
	}
	windowStart := time.Now()
	lo.Duration, lo.Seed = time.Duration(ev.plan.Duration), lo.Seed+1
	ms, err := loadgen.Run(ctx, lo)
	if err != nil {
		return r, fmt.Errorf("measured window: %w", err)
	}
	r.Throughput, r.Requests, r.Seconds = ms.Throughput, ms.Requests, ms.Elapsed.Seconds()
	r.Errors, r.NoAnswer = ms.Errors, ms.Status[0]
	r.P50Ms = float64(ms.Latency.P50) / 1e6
	r.P99Ms = float64(ms.Latency.P99) / 1e6
	if a != nil {
		after, err := takeEvalSnapshot(a)
		if err != nil {
			return r, err
		}
		ev.probes = max(ev.probes, after.probes)
		r.MonitoredCalls = after.calls - before.calls
		r.Records = after.produced() - before.produced()
		r.Dropped = after.writer.Dropped - before.writer.Dropped
		if c.twoPhase() {
			h, err := evalHistory(a)
			if err != nil {
				return r, err
			}
			for _, cy := range h.Cycles {
				if cy.At.Before(windowStart) {
					r.CyclesBefore++
					r.Selected = cy.Selected
					continue
				}
				if cy.Err != "" {
					return r, fmt.Errorf("analysis cycle failed: %s", cy.Err)
				}
				r.Cycles = append(r.Cycles, evalCycle{Candidates: cy.Candidates, Selected: len(cy.Selected), Added: len(cy.Added), Removed: len(cy.Removed)})
				r.Selected = cy.Selected
			}
			r.Selected = mapSlice(r.Selected, shortSig)
		}
	}
	if err := svc.stop(10 * time.Second); err != nil {
		return r, err
	}
	if ps := svc.cmd.ProcessState; ps != nil {
		r.ServerCPUSeconds = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if busy0 > 0 {
		r.OtherCPUSeconds = max(0, (machineCPU()-busy0).Seconds()-(processCPU("self")-self0).Seconds()-r.ServerCPUSeconds)
	}
	if fi, err := os.Stat(filepath.Join(dir, "petclinic.tgr")); err == nil {
		r.TraceBytes = fi.Size()
	}
	return r, nil
}

// clockTick is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTick = 10 * time.Millisecond

// machineCPU is the CPU time every CPU spent busy since boot, from the
// aggregate line of /proc/stat (user, nice, system, irq, softirq, steal); 0
// where there is no /proc/stat.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * clockTick
}

// processCPU is the user and system CPU time of a process ("self" or a pid)
// from /proc/PID/stat; 0 where there is none.
func processCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: fields count from its ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	s, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return time.Duration(u+s) * clockTick
}

// evalSnapshot is what the admin endpoint says at one instant.
type evalSnapshot struct {
	writer admin.WriterState
	calls  uint64
	probes int
}

// produced counts the fine records made so far: written, queued or dropped.
func (s evalSnapshot) produced() uint64 {
	return s.writer.Written + s.writer.Queued + s.writer.Dropped
}

func takeEvalSnapshot(a *ctl) (evalSnapshot, error) {
	var s evalSnapshot
	if _, err := a.call("GET", admin.Prefix+"writer", nil, &s.writer, ""); err != nil {
		return s, fmt.Errorf("reading the writer state: %w", err)
	}
	var l admin.StatsList
	if _, err := a.call("GET", admin.Prefix+"stats?sort=id", nil, &l, ""); err != nil {
		return s, fmt.Errorf("reading the statistics: %w", err)
	}
	for _, st := range l.Stats {
		s.calls += st.Count
	}
	s.probes = l.Matched
	return s, nil
}

func evalHistory(a *ctl) (historyView, error) {
	var h historyView
	if _, err := a.call("GET", admin.Prefix+"analysis/history", nil, &h, ""); err != nil {
		return h, fmt.Errorf("reading the analysis history: %w", err)
	}
	return h, nil
}

// summarizeEval fills in sum.Configs from sum.Runs.
func summarizeEval(sum *evalSummary) {
	sum.Configs = nil
	var ref *evalConfigSummary
	for _, c := range sum.Plan.Configs {
		cs := evalConfigSummary{evalConfig: c}
		var cpu, reqs, calls, records, dropped, errs, secs float64
		var cycles, selected, cands int
		for _, r := range sum.Runs {
			if r.Config != c.Name {
				continue
			}
			cs.Runs++
			cs.PerRun = append(cs.PerRun, r.Throughput)
			cpu += r.ServerCPUSeconds
			reqs += float64(r.Requests)
			calls += float64(r.MonitoredCalls)
			records += float64(r.Records)
			dropped += float64(r.Dropped)
			errs += float64(r.Errors)
			secs += r.Seconds
			cs.NoAnswer += r.NoAnswer
			for _, cy := range r.Cycles {
				cycles++
				selected += cy.Selected
				cands += cy.Candidates
			}
			if len(r.Selected) > 0 {
				if cs.SelectedFuncs == nil {
					cs.SelectedFuncs = map[string]int{}
				}
				for _, f := range r.Selected {
					cs.SelectedFuncs[f]++
				}
			}
			allReqs := float64(r.Requests + r.WarmupRequests)
			if allReqs > 0 {
				cs.CPUPerRequestUs += 1e6 * r.ServerCPUSeconds / allReqs
			}
		}
		if cs.Runs == 0 {
			continue
		}
		cs.Throughput, cs.CI95, cs.StdDev = bench.MeanCI95(cs.PerRun)
		cs.CPUPerRequestUs /= float64(cs.Runs)
		if reqs > 0 {
			cs.CallsPerRequest = calls / reqs
			cs.ErrorShare = errs / reqs
		}
		if secs > 0 {
			cs.RecordsPerSec = records / secs
		}
		if records > 0 {
			cs.DroppedShare = dropped / records
		}
		if cycles > 0 {
			cs.Selected = float64(selected) / float64(cycles)
			cs.Candidates = float64(cands) / float64(cycles)
		}
		sum.Configs = append(sum.Configs, cs)
		if c.Kind == kindNone {
			ref = &sum.Configs[len(sum.Configs)-1]
		}
	}
	if ref == nil {
		return
	}
	if ref.Throughput <= 0 {
		return
	}
	for i := range sum.Configs {
		cs := &sum.Configs[i]
		cs.Ratio, cs.RatioCI = bench.RatioCI95(cs.Throughput, cs.CI95, ref.Throughput, ref.CI95)
		cs.Overhead = 1 - cs.Ratio
	}
}

func writeEvalReport(dir string, sum *evalSummary) error {
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o666); err != nil {
		return err
	}
	var tb strings.Builder
	if err := writeEvalTable(&tb, sum); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(tb.String()), 0o666); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "throughput.svg"))
	if err != nil {
		return err
	}
	if err := bench.WriteLineChart(f, evalChart(sum)); err != nil {
		f.Close()
		return fmt.Errorf("writing the chart: %w", err)
	}
	return f.Close()
}

// evalChart is the paper's Fig. 4 for sum: no monitoring, full monitoring and
// phase 1 as levels, the two filters by sampling rate.
func evalChart(sum *evalSummary) *bench.LineChart {
	p := sum.Plan
	c := &bench.LineChart{
		Title: "PetClinic throughput by sampling rate",
		Subtitle: fmt.Sprintf("%d run(s) × %s per configuration (mean, 95 %% CI); 5–20 users without think time; load generator on the same %d-CPU machine",
			p.Runs, p.Duration, sum.Env.NumCPU),
		XTitle: "sampling rate of the two-phase configurations",
		YTitle: "throughput, requests/s",
		Unit:   "req/s",
	}
	for _, s := range p.Sampling {
		c.X = append(c.X, fmt.Sprintf("%g%%", s))
	}
	series := map[string]*bench.ChartSeries{}
	for _, kind := range []string{kindRestricted, kindExpanded} {
		s := &bench.ChartSeries{Values: make([]float64, len(c.X)), CIs: make([]float64, len(c.X))}
		for i := range s.Values {
			s.Values[i] = math.NaN()
		}
		series[kind] = s
	}
	for _, cs := range sum.Configs {
		switch cs.Kind {
		case kindNone, kindPhase1, kindFull:
			c.Levels = append(c.Levels, bench.ChartLevel{Name: cs.Label, Value: cs.Throughput, CI: cs.CI95})
			if cs.Kind == kindNone {
				c.RelativeTo, c.RelativeToTitle = cs.Throughput, "% of no monitoring"
			}
		case kindRestricted, kindExpanded:
			s := series[cs.Kind]
			s.Name = cs.Label + ": " + cs.Filter
			if i := slices.Index(p.Sampling, cs.Sampling); i >= 0 {
				s.Values[i], s.CIs[i] = cs.Throughput, cs.CI95
			}
		}
	}
	for _, kind := range []string{kindRestricted, kindExpanded} {
		if s := series[kind]; s.Name != "" {
			c.Series = append(c.Series, *s)
		}
	}
	return c
}

// writeEvalTable writes the results table.
func writeEvalTable(w io.Writer, sum *evalSummary) error {
	p := sum.Plan
	fmt.Fprintf(w, "PetClinic throughput (plan %s): %d run(s) per configuration, %s measured after %s of load, interleaved;\n",
		p.Name, p.Runs, p.Duration, p.Warmup)
	fmt.Fprintf(w, "5–20 users without think time; load generator and service on one machine (%d CPUs, %s); analysis every %s.\n",
		sum.Env.NumCPU, cmpOr(sum.Env.CPU, sum.Env.GOARCH), p.Interval)
	fmt.Fprintf(w, "restricted: %s\nexpanded:   %s\n", p.Restricted, p.Expanded)
	if !sum.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the plan stopped early; these are the runs done.")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	hasRef := slices.ContainsFunc(sum.Configs, func(cs evalConfigSummary) bool { return cs.Ratio != 0 })
	pct := func(x float64) string {
		if !hasRef {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	fmt.Fprintln(tw, "configuration\tsampling\truns\treq/s\t± 95% CI\tvs none\t± 95% CI\toverhead\tCPU µs/req\tcalls/req\trecords/s\tdropped\tselected\t")
	for _, cs := range sum.Configs {
		sampling, selected := "-", "-"
		if cs.Sampling > 0 {
			sampling = fmt.Sprintf("%g%%", cs.Sampling)
		}
		if cs.Candidates > 0 {
			selected = fmt.Sprintf("%.1f of %.0f", cs.Selected, cs.Candidates)
		}
		records, dropped, calls := "-", "-", "-"
		if cs.Kind != kindNone {
			calls = fmt.Sprintf("%.1f", cs.CallsPerRequest)
		}
		if cs.RecordsPerSec > 0 {
			records = fmt.Sprintf("%.0f", cs.RecordsPerSec)
			dropped = fmt.Sprintf("%.2f%%", 100*cs.DroppedShare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t\n",
			cs.Name, sampling, cs.Runs, cs.Throughput, ciText(cs.CI95, cs.Runs, "%.1f"),
			pct(cs.Ratio), ciText(100*cs.RatioCI, cs.Runs, "%.1f%%"), pct(cs.Overhead),
			cs.CPUPerRequestUs, calls, records, dropped, selected)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var noAnswer int64
	for _, cs := range sum.Configs {
		noAnswer += cs.NoAnswer
	}
	var other, otherMax, runSecs float64
	for _, r := range sum.Runs {
		other += r.OtherCPUSeconds
		otherMax = max(otherMax, r.OtherCPUSeconds)
	}
	if n := len(sum.Runs); n > 0 {
		other /= float64(n)
		runSecs = float64(time.Duration(p.Warmup + p.Duration).Seconds())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "vs none: mean throughput over the no-monitoring mean; overhead: 1 − that. CPU µs/req: the service's")
	fmt.Fprintln(w, "CPU time per request over its whole life. records/s: fine records made in the window; selected: functions")
	fmt.Fprintln(w, "the analyzer selected per cycle in the window, of the candidates.")
	if noAnswer > 0 {
		fmt.Fprintf(w, "warning: %d request(s) got no answer (timeouts or connection errors)\n", noAnswer)
	}
	if runSecs > 0 {
		fmt.Fprintf(w, "Other processes used %.2f CPU-s per run on average, %.2f at most, of the %.0f CPU-s a run has (%d CPUs × %.0f s).\n",
			other, otherMax, float64(sum.Env.NumCPU)*runSecs, sum.Env.NumCPU, runSecs)
	}
	return nil
}

func ciText(ci float64, runs int, format string) string {
	if runs < 2 {
		return "-"
	}
	return fmt.Sprintf(format, ci)
}
