package evaluation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// Driver runs a Plan on the example service: it builds examples/petclinic
// plainly and with tigris, once per scope the plan's configurations use, and
// the load generator (examples/petclinic/cmd/petclinic-load), then runs every
// configuration Runs times in fresh processes, interleaved, the order rotated
// each round and every other round reversed. With two CPUs or more the
// service runs on one CPU and the load generator, a process of its own, on
// another (sched_setaffinity): the service's CPU time per request is then
// measured apart from the load's. The zero value is not usable: Root and, for
// a plan with tigris configurations, Tigris are required.
type Driver struct {
	// Root is the tigris repository; the service is Root/examples/petclinic.
	Root string
	// Tigris is the tigris executable that builds the instrumented service
	// (`tigris go build`).
	Tigris string
	// Scratch, when not "", receives every run's working directory (its trace
	// file), which is kept; "" uses a temporary directory, each run's removed
	// when the run ends.
	Scratch string
	// Progress receives a line per build and per run (bench/driver.go's
	// format); nil discards them.
	Progress io.Writer
}

// run is one Driver.Run in progress.
type run struct {
	plan     Plan
	plainBin string
	tigBins  map[string]string // by scope
	loadBin  string
	scratch  string // parent of the runs' working directories
	keep     bool
	probes   map[string]int // by scope
	// svcCPU and loadCPU are the CPUs the service and the load generator run
	// on; -1 when not pinned.
	svcCPU, loadCPU int
}

// Run builds the service and runs p. It returns the summary of the runs that
// finished, summarized, with the error that stopped the plan early (ctx's
// when it ended); the summary is nil when no run finished. Summary.Complete
// says whether every planned run ran.
func (d *Driver) Run(ctx context.Context, p Plan) (*Summary, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	progress := d.Progress
	if progress == nil {
		progress = io.Discard
	}
	example := filepath.Join(d.Root, "examples", "petclinic")
	if !fileExists(filepath.Join(example, "go.mod")) {
		return nil, fmt.Errorf("%s: no go.mod", example)
	}
	tmp, err := os.MkdirTemp("", "tigris-petclinic-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ev := &run{plan: p, scratch: filepath.Join(tmp, "runs"), tigBins: map[string]string{}, probes: map[string]int{}, svcCPU: -1, loadCPU: -1}
	if d.Scratch != "" {
		ev.scratch, ev.keep = d.Scratch, true
	}
	sum := &Summary{Workload: Workload, Plan: p, Env: bench.MachineEnvironment(), Started: time.Now()}
	if cpus := allowedCPUs(); len(cpus) >= 2 {
		ev.loadCPU, ev.svcCPU = cpus[len(cpus)-2], cpus[len(cpus)-1]
		sum.Pinning = fmt.Sprintf("service on CPU %d, load generator on CPU %d (sched_setaffinity)", ev.svcCPU, ev.loadCPU)
	} else {
		sum.Pinning = "not pinned: fewer than two CPUs allowed"
	}

	type build struct {
		name, scope string
		bin         *string
		argv        []string
		pkg         string
	}
	builds := []build{{name: "load generator", bin: &ev.loadBin, argv: []string{"go", "build"}, pkg: "./cmd/petclinic-load"}}
	if slices.ContainsFunc(p.Configs, func(c Config) bool { return c.Plain() }) {
		builds = append(builds, build{name: "plain", bin: &ev.plainBin, argv: []string{"go", "build"}, pkg: "./cmd/petclinic"})
	}
	for _, sc := range Scopes() {
		if !slices.ContainsFunc(p.Configs, func(c Config) bool { return c.Scope == sc.Name }) {
			continue
		}
		sum.Scopes = append(sum.Scopes, sc)
		cfg, err := sc.writeConfig(tmp)
		if err != nil {
			return nil, err
		}
		argv := []string{d.Tigris, "go", "build"}
		if cfg != "" {
			argv = []string{d.Tigris, "go", "--config", cfg, "build"}
		}
		bin := new(string)
		ev.tigBins[sc.Name] = ""
		builds = append(builds, build{name: "tigris " + sc.Name, scope: sc.Name, bin: bin, argv: argv, pkg: "./cmd/petclinic"})
	}
	for _, b := range builds {
		exe := filepath.Join(tmp, "petclinic-"+strings.ReplaceAll(b.name, " ", "-"))
		start := time.Now()
		cmd := exec.CommandContext(ctx, b.argv[0], append(b.argv[1:], "-o", exe, b.pkg)...)
		cmd.Dir = example
		cmd.Env = buildEnv()
		if err := runWithTicker(cmd, progress, "building "+b.name); err != nil {
			return nil, fmt.Errorf("building petclinic (%s): %w", b.name, err)
		}
		fi, err := os.Stat(exe)
		if err != nil {
			return nil, err
		}
		*b.bin = exe
		if b.scope != "" {
			ev.tigBins[b.scope] = exe
		}
		sum.Builds = append(sum.Builds, bench.BuildResult{Binary: b.name, Duration: time.Since(start), Size: fi.Size()})
		fmt.Fprintf(progress, "bench: built %s petclinic in %s (%s)\n", b.name, time.Since(start).Round(100*time.Millisecond), human.Bytes(fi.Size()))
	}

	total := 0
	for _, c := range p.Configs {
		total += c.runs(p)
	}
	var runErr error
	var took []time.Duration
	for rep := 1; rep <= p.Runs && runErr == nil; rep++ {
		order := roundOrder(p.Configs, rep)
		for i, c := range order {
			if p.Pause > 0 {
				select {
				case <-time.After(time.Duration(p.Pause)):
				case <-ctx.Done():
				}
			}
			start := time.Now()
			r, err := ev.runOnce(ctx, c, rep, i*100/len(order))
			if err != nil {
				runErr = fmt.Errorf("%s run %d: %w", c.Name, rep, err)
				break
			}
			took = append(took, time.Since(start))
			sum.Runs = append(sum.Runs, r)
			fmt.Fprintln(progress, runLine(&r, &c, len(sum.Runs), total, time.Since(sum.Started), took, c.runs(p)))
		}
	}
	sum.Ended = time.Now()
	sum.Complete = runErr == nil
	sum.ScopeProbes = ev.probes
	for _, n := range ev.probes {
		sum.Probes = max(sum.Probes, n)
	}
	if len(sum.Runs) == 0 {
		return nil, runErr
	}
	Summarize(sum)
	return sum, runErr
}

// runs is how many times c runs in p.
func (c *Config) runs(p Plan) int {
	if c.Once {
		return 1
	}
	return p.Runs
}

// roundOrder is the order of round rep (from 1): the configurations that
// run in it, rotated by rep−1 so that each follows a different one every
// round, and every other round reversed.
func roundOrder(cs []Config, rep int) []Config {
	var order []Config
	for _, c := range cs {
		if !c.Once || rep == 1 {
			order = append(order, c)
		}
	}
	if len(order) == 0 {
		return nil
	}
	k := (rep - 1) % len(order)
	order = append(order[k:], order[:k]...)
	if rep%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// Describe says on w what running p will do and about how long it takes, and
// warns when the machine is busy before the start.
func Describe(w io.Writer, p Plan, out string) {
	names := make([]string, len(p.Configs))
	for i, c := range p.Configs {
		names[i] = c.Name
	}
	fmt.Fprintf(w, "bench: petclinic plan %s, configurations %s; results in %s\n", p.Name, strings.Join(names, ", "), out)
	fmt.Fprintf(w, "bench: %d run(s) per configuration: %s of load, then %s measured; 5–20 users without think time; analysis every %s\n",
		p.Runs, p.Warmup, p.Duration, p.Interval)
	fmt.Fprintf(w, "bench: restricted filter %s; expanded filter %s\n", p.Restricted, p.Expanded)
	var total time.Duration
	for _, c := range p.Configs {
		per := time.Duration(p.Warmup+p.Pause) + measured(p, c) + 1500*time.Millisecond
		if c.Kind == KindShift {
			per += 2*time.Duration(p.ShiftCycles)*time.Duration(p.Interval) - time.Duration(p.Duration)
		}
		total += time.Duration(c.runs(p)) * per
	}
	fmt.Fprintf(w, "bench: the runs take about %s, plus the builds (the first tigris build recompiles the standard library: a minute or two)\n",
		total.Round(time.Second))
	if load := bench.LoadAverage(); load > float64(runtime.NumCPU())/2 {
		fmt.Fprintf(w, "bench: warning: load average %.1f on %d CPU(s) before the start: something else is running, expect noisy results\n",
			load, runtime.NumCPU())
	}
}

// runLine is the progress line of a run.
func runLine(r *RunResult, c *Config, done, total int, elapsed time.Duration, took []time.Duration, runs int) string {
	var mean time.Duration
	for _, d := range took {
		mean += d
	}
	mean /= time.Duration(len(took))
	var b strings.Builder
	fmt.Fprintf(&b, "[%*d/%d %s, ETA %s] run %d/%d %s: %.0f µs CPU/request, %.1f req/s (%d requests, %d errors",
		len(strconv.Itoa(total)), done, total, human.Clock(elapsed), human.Clock(time.Duration(total-done)*mean), r.Run, runs, c.Name,
		r.CPUPerRequestUs, r.Throughput, r.Requests, r.Errors)
	if r.NoAnswer > 0 {
		fmt.Fprintf(&b, ", %d without answer", r.NoAnswer)
	}
	b.WriteString(")")
	if !c.Plain() {
		fmt.Fprintf(&b, "; %.1f monitored calls/request", float64(r.MonitoredCalls)/float64(max(r.Requests, 1)))
	}
	if c.TwoPhase() {
		fmt.Fprintf(&b, "; %d cycle(s) before, %d in the window, %d selected at its end", r.CyclesBefore, len(r.Cycles), len(r.Selected))
	}
	if r.Records > 0 {
		fmt.Fprintf(&b, "; %d records, %d dropped", r.Records, r.Dropped)
	}
	fmt.Fprintf(&b, "; load %.1f, other processes %.1f CPU-s", r.LoadAvg, r.OtherCPUSeconds)
	return b.String()
}

// runOnce starts a fresh service for c, loads it and measures one window.
func (ev *run) runOnce(ctx context.Context, c Config, rep, pos int) (RunResult, error) {
	r := RunResult{Config: c.Name, Run: rep, Position: pos, LoadAvg: bench.LoadAverage()}
	busy0, self0 := machineCPU(), processCPU("self")
	dir := filepath.Join(ev.scratch, fmt.Sprintf("%s-run-%02d", c.Name, rep))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return r, err
	}
	if !ev.keep {
		defer os.RemoveAll(dir)
	}
	// gctrace: the collections in the window are counted (service.gcs).
	bin, env := ev.plainBin, append(slices.Clone(c.Env), "GODEBUG=gctrace=1")
	trace := filepath.Join(dir, "petclinic.tgr")
	if !c.Plain() {
		bin = ev.tigBins[c.Scope]
		env = append(env, "TIGRIS_ADMIN=127.0.0.1:0", "TIGRIS_OUT="+trace)
	}
	svc, err := startService(ctx, bin, dir, !c.Plain(), env, ev.svcCPU)
	if err != nil {
		return r, err
	}
	defer svc.kill()
	pid := svc.cmd.Process.Pid
	r.ServiceCPUs = cpusAllowed(pid)
	var a *adminclient.Client
	if !c.Plain() {
		if a, err = adminclient.New(svc.admin, adminclient.Options{}); err != nil {
			return r, err
		}
	}

	base := ev.plan.Seed + 1000*uint64(rep)
	seed := base
	load := func(d time.Duration, patterns []string) (loadgen.Stats, error) {
		seed++
		return ev.load(ctx, svc.url, d, seed, patterns)
	}
	// The measured window's load has the same seed in every configuration of
	// a round, however many warm-up loads each needed: the same simulated
	// users, so a round's truth run saw the workload its two-phase runs saw.
	measure := func(d time.Duration, patterns []string) (loadgen.Stats, error) {
		return ev.load(ctx, svc.url, d, base+100, patterns)
	}
	ws, err := load(time.Duration(ev.plan.Warmup), c.Patterns)
	if err != nil {
		return r, fmt.Errorf("warm-up: %w", err)
	}
	r.WarmupRequests = ws.Requests
	if c.TwoPhase() {
		// The window starts after the first cycle: load on, one interval at a
		// time, for at most four more intervals.
		for extra := 0; ; extra++ {
			h, err := history(ctx, a)
			if err != nil {
				return r, err
			}
			if n := len(h); n > 0 {
				if e := h[n-1].Err; e != "" {
					return r, fmt.Errorf("analysis cycle failed: %s", e)
				}
				break
			}
			if extra == 4 {
				return r, fmt.Errorf("no analysis cycle within %s of load", time.Duration(ev.plan.Warmup)+4*time.Duration(ev.plan.Interval))
			}
			s, err := load(time.Duration(ev.plan.Interval), c.Patterns)
			if err != nil {
				return r, fmt.Errorf("warm-up: %w", err)
			}
			r.WarmupRequests += s.Requests
		}
	}

	queryID := 0
	if c.Query != "" {
		posted, err := a.PostQueries(ctx, c.Query)
		if err != nil {
			return r, fmt.Errorf("posting the query: %w", err)
		}
		for _, s := range posted.Statements {
			if s.ID != 0 {
				queryID = s.ID
			}
		}
	}
	var before snapshot
	if a != nil {
		if before, err = takeSnapshot(ctx, a); err != nil {
			return r, err
		}
	}
	windowStart := time.Now()
	r.WindowStart = windowStart
	cpu0, gc0 := threadsCPU(pid), svc.gcs.Load()
	var ms loadgen.Stats
	if c.Kind == KindShift {
		span := time.Duration(ev.plan.ShiftCycles) * time.Duration(ev.plan.Interval)
		first, err := measure(span, c.Patterns)
		if err != nil {
			return r, fmt.Errorf("measured window, first pattern: %w", err)
		}
		r.SwitchAt = time.Now()
		if ms, err = measure(span, c.Then); err != nil {
			return r, fmt.Errorf("measured window, second pattern: %w", err)
		}
		ms.Requests += first.Requests
		ms.Errors += first.Errors
		ms.Elapsed += first.Elapsed
		for k, v := range first.Status {
			ms.Status[k] += v
		}
		ms.Throughput = float64(ms.Requests) / ms.Elapsed.Seconds()
	} else if ms, err = measure(measured(ev.plan, c), c.Patterns); err != nil {
		return r, fmt.Errorf("measured window: %w", err)
	}
	windowEnd := time.Now()
	r.WindowCPUSeconds = (threadsCPU(pid) - cpu0).Seconds()
	r.GCs = svc.gcs.Load() - gc0
	r.Throughput, r.Requests, r.Seconds = ms.Throughput, ms.Requests, ms.Elapsed.Seconds()
	r.Errors, r.NoAnswer = ms.Errors, ms.Status[0]
	r.P50Ms = float64(ms.Latency.P50) / 1e6
	r.P99Ms = float64(ms.Latency.P99) / 1e6
	if r.Requests > 0 {
		r.CPUPerRequestUs = 1e6 * r.WindowCPUSeconds / float64(r.Requests)
	}
	if a != nil {
		after, err := takeSnapshot(ctx, a)
		if err != nil {
			return r, err
		}
		ev.probes[c.Scope] = max(ev.probes[c.Scope], after.probes)
		r.MonitoredCalls = after.calls - before.calls
		r.TimedCalls = after.timed - before.timed
		if queryID != 0 {
			d, err := a.CancelQuery(ctx, queryID)
			if err != nil {
				return r, fmt.Errorf("cancelling the query: %w", err)
			}
			r.QueryTuples, r.QueryRows = d.Stats.Tuples, d.Stats.Rows
		}
		r.Records = after.produced() - before.produced()
		r.Dropped = after.writer.Dropped - before.writer.Dropped
		if c.TwoPhase() {
			h, err := history(ctx, a)
			if err != nil {
				return r, err
			}
			for _, cy := range h {
				if cy.At.Before(windowStart) {
					r.CyclesBefore++
					r.Selected = cy.Selected
					continue
				}
				if cy.Err != "" {
					return r, fmt.Errorf("analysis cycle failed: %s", cy.Err)
				}
				r.Cycles = append(r.Cycles, Cycle{At: cy.At, Candidates: cy.Candidates, Selected: len(cy.Selected),
					Added: len(cy.Added), Removed: len(cy.Removed), Functions: cy.Selected})
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
	if fi, err := os.Stat(trace); err == nil {
		r.TraceBytes = fi.Size()
	}
	if c.Kind == KindTruth {
		if r.Truth, r.TruthWindows, r.TruthFunctions, err = groundTruth(trace, ev.plan, windowStart, windowEnd); err != nil {
			return r, err
		}
	}
	return r, nil
}

// measured is how long c's measured window lasts (a shift configuration's,
// two patterns of Plan.ShiftCycles intervals, aside): the plan's duration,
// and for a truth run at least truthWindows analysis intervals.
func measured(p Plan, c Config) time.Duration {
	d := time.Duration(p.Duration)
	if c.Kind == KindTruth {
		d = max(d, truthWindows*time.Duration(p.Interval))
	}
	return d
}

// load runs the load generator, a process of its own on ev.loadCPU, against
// url for d and returns its statistics.
func (ev *run) load(ctx context.Context, url string, d time.Duration, seed uint64, patterns []string) (loadgen.Stats, error) {
	var s loadgen.Stats
	args := []string{"-url", url, "-duration", d.String(), "-think", "-1ns", "-seed", strconv.FormatUint(seed, 10), "-json", "-q"}
	if len(patterns) > 0 {
		args = append(args, "-patterns", strings.Join(patterns, ","))
	}
	cmd := exec.CommandContext(ctx, ev.loadBin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startOn(cmd, ev.loadCPU); err != nil {
		return s, fmt.Errorf("starting the load generator: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return s, fmt.Errorf("the load generator: %w\n%s", err, stderr.String())
	}
	if err := json.Unmarshal([]byte(stdout.String()), &s); err != nil {
		return s, fmt.Errorf("reading the load generator's statistics: %w", err)
	}
	if s.Status == nil {
		s.Status = map[int]int64{}
	}
	return s, nil
}

// snapshot is what the admin endpoint says at one instant.
type snapshot struct {
	writer       admin.WriterState
	calls, timed uint64
	probes       int
}

// produced counts the fine records made so far: written, queued or dropped.
func (s snapshot) produced() uint64 {
	return s.writer.Written + s.writer.Queued + s.writer.Dropped
}

func takeSnapshot(ctx context.Context, a *adminclient.Client) (snapshot, error) {
	var s snapshot
	w, err := a.Writer(ctx)
	if err != nil {
		return s, fmt.Errorf("reading the writer state: %w", err)
	}
	s.writer = *w
	l, err := a.Stats(ctx, adminclient.StatsQuery{Sort: "id"})
	if err != nil {
		return s, fmt.Errorf("reading the statistics: %w", err)
	}
	for _, st := range l.Stats {
		s.calls += st.Count
		s.timed += st.Timed
	}
	s.probes = l.Matched
	return s, nil
}

func history(ctx context.Context, a *adminclient.Client) ([]adminclient.Cycle, error) {
	h, err := a.History(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the analysis history: %w", err)
	}
	return h, nil
}
