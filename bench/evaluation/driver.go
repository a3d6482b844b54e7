package evaluation

import (
	"context"
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
// plainly and with tigris, once each, then runs every configuration Runs times
// in fresh processes, interleaved, every other round in reverse order. The
// zero value is not usable: Root and, for a plan with tigris configurations,
// Tigris are required.
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
	tigBin   string
	scratch  string // parent of the runs' working directories
	keep     bool
	probes   int
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
	ev := &run{plan: p, scratch: filepath.Join(tmp, "runs")}
	if d.Scratch != "" {
		ev.scratch, ev.keep = d.Scratch, true
	}

	sum := &Summary{Workload: Workload, Plan: p, Env: bench.MachineEnvironment(), Started: time.Now()}
	for _, b := range []struct {
		name string
		need func(Config) bool
		bin  *string
		argv []string
	}{
		{"plain", func(c Config) bool { return c.Plain() }, &ev.plainBin, []string{"go", "build"}},
		{"tigris", func(c Config) bool { return !c.Plain() }, &ev.tigBin, []string{d.Tigris, "go", "build"}},
	} {
		if !slices.ContainsFunc(p.Configs, b.need) {
			continue
		}
		exe := filepath.Join(tmp, "petclinic-"+b.name)
		start := time.Now()
		cmd := exec.CommandContext(ctx, b.argv[0], append(b.argv[1:], "-o", exe, "./cmd/petclinic")...)
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
		sum.Builds = append(sum.Builds, bench.BuildResult{Binary: b.name, Duration: time.Since(start), Size: fi.Size()})
		fmt.Fprintf(progress, "bench: built %s petclinic in %s (%s)\n", b.name, time.Since(start).Round(100*time.Millisecond), human.Bytes(fi.Size()))
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
			fmt.Fprintln(progress, runLine(&r, &c, len(sum.Runs), total, time.Since(sum.Started), took, p.Runs))
		}
	}
	sum.Ended = time.Now()
	sum.Complete = runErr == nil
	sum.Probes = ev.probes
	if len(sum.Runs) == 0 {
		return nil, runErr
	}
	Summarize(sum)
	return sum, runErr
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
	per := time.Duration(p.Warmup+p.Duration+p.Pause) + 1500*time.Millisecond
	fmt.Fprintf(w, "bench: the runs take about %s, plus the builds (the first tigris build recompiles the standard library: a minute or two)\n",
		(time.Duration(p.Runs*len(p.Configs)) * per).Round(time.Second))
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
	fmt.Fprintf(&b, "[%*d/%d %s, ETA %s] run %d/%d %s: %.1f req/s (%d requests, %d errors",
		len(strconv.Itoa(total)), done, total, human.Clock(elapsed), human.Clock(time.Duration(total-done)*mean), r.Run, runs, c.Name, r.Throughput, r.Requests, r.Errors)
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
func (ev *run) runOnce(ctx context.Context, c Config, rep int) (RunResult, error) {
	r := RunResult{Config: c.Name, Run: rep, LoadAvg: bench.LoadAverage()}
	busy0, self0 := machineCPU(), processCPU("self")
	dir := filepath.Join(ev.scratch, fmt.Sprintf("%s-run-%02d", c.Name, rep))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return r, err
	}
	if !ev.keep {
		defer os.RemoveAll(dir)
	}
	bin, env := ev.plainBin, slices.Clone(c.Env)
	if !c.Plain() {
		bin = ev.tigBin
		env = append(env, "TIGRIS_ADMIN=127.0.0.1:0", "TIGRIS_OUT="+filepath.Join(dir, "petclinic.tgr"))
	}
	svc, err := startService(ctx, bin, dir, !c.Plain(), env)
	if err != nil {
		return r, err
	}
	defer svc.kill()
	var a *adminclient.Client
	if !c.Plain() {
		if a, err = adminclient.New(svc.admin, adminclient.Options{}); err != nil {
			return r, err
		}
	}

	lo := loadgen.Options{BaseURL: svc.url, ThinkTime: -1, Seed: ev.plan.Seed + 1000*uint64(rep), Duration: time.Duration(ev.plan.Warmup)}
	ws, err := loadgen.Run(ctx, lo)
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
			lo.Duration = time.Duration(ev.plan.Interval)
			s, err := loadgen.Run(ctx, lo)
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
		after, err := takeSnapshot(ctx, a)
		if err != nil {
			return r, err
		}
		ev.probes = max(ev.probes, after.probes)
		r.MonitoredCalls = after.calls - before.calls
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
				r.Cycles = append(r.Cycles, Cycle{Candidates: cy.Candidates, Selected: len(cy.Selected), Added: len(cy.Added), Removed: len(cy.Removed)})
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

// snapshot is what the admin endpoint says at one instant.
type snapshot struct {
	writer admin.WriterState
	calls  uint64
	probes int
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
