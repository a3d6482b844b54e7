package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
)

// Driver builds and runs a [Plan]: MooBench's External Controller. The zero value
// is not usable: Dir is required. A Driver runs one plan at a time.
type Driver struct {
	// Dir receives the primary data, which is kept: raw/<experiment>/<config>/
	// run-NN.bin and logs/<experiment>/<config>/run-NN.log. It is created if
	// missing; files of an earlier plan with the same names are overwritten.
	Dir string
	// Progress receives one line per build and per run; nil discards them.
	Progress io.Writer
	// KeepScratch keeps every run's scratch directory (its trace files) under
	// Dir/scratch instead of removing it after the run.
	KeepScratch bool
}

// Results are what a plan's runs produced. The timings stay in the raw data
// files; RunData.Load reads them.
type Results struct {
	Plan    Plan          `json:"plan"`
	Env     Environment   `json:"env"`
	Builds  []BuildResult `json:"builds"`
	Runs    []RunData     `json:"runs"` // in the order they ran
	Started time.Time     `json:"started"`
	Ended   time.Time     `json:"ended"`
}

// BuildResult describes one built binary.
type BuildResult struct {
	Binary   string        `json:"binary"`
	Duration time.Duration `json:"durationNs"`
	Size     int64         `json:"size"`
}

// Environment describes the machine, for the report (thesis, R14).
type Environment struct {
	GoVersion string  `json:"goVersion"`
	GOOS      string  `json:"goos"`
	GOARCH    string  `json:"goarch"`
	NumCPU    int     `json:"numCPU"`
	CPU       string  `json:"cpu,omitempty"`
	Kernel    string  `json:"kernel,omitempty"`
	LoadAvg   float64 `json:"loadAvg"` // 1-minute load average when the plan started
}

// RunsOf returns the runs of one configuration in one experiment, in run order.
func (r *Results) RunsOf(experiment, variant string) []*RunData {
	var out []*RunData
	for i := range r.Runs {
		if r.Runs[i].Experiment == experiment && r.Runs[i].Variant == variant {
			out = append(out, &r.Runs[i])
		}
	}
	return out
}

// Run validates p, builds its binaries into a temporary directory, and runs
// every configuration of every experiment Runs times in fresh processes,
// interleaved: run 1 of every configuration in plan order, then run 2, and so on.
// It stops at the first failure and returns what it has so far with the error.
func (d *Driver) Run(ctx context.Context, p Plan) (*Results, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if d.Dir == "" {
		return nil, fmt.Errorf("driver: no results directory")
	}
	progress := d.Progress
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return nil, err
	}
	res := &Results{Plan: p, Env: environment(), Started: time.Now()}
	defer func() { res.Ended = time.Now() }()
	bin, err := os.MkdirTemp("", "moobench-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)

	used := map[string]bool{}
	for _, v := range p.Variants {
		used[v.Binary] = true
	}
	exes := map[string]string{}
	for _, b := range p.Binaries {
		if !used[b.Name] {
			continue
		}
		exe := filepath.Join(bin, b.Name)
		if runtime.GOOS == "windows" {
			exe += ".exe"
		}
		// Announced before it starts: a cold build can take minutes.
		if b.Description != "" {
			fmt.Fprintf(progress, "build %-8s %s ...\n", b.Name, b.Description)
		}
		t0 := time.Now()
		if err := b.Build(ctx, exe); err != nil {
			return res, fmt.Errorf("building %s: %w", b.Name, err)
		}
		br := BuildResult{Binary: b.Name, Duration: time.Since(t0)}
		if fi, err := os.Stat(exe); err == nil {
			br.Size = fi.Size()
		}
		res.Builds = append(res.Builds, br)
		exes[b.Name] = exe
		fmt.Fprintf(progress, "build %-8s %6.1fs  %5.1f MB\n", b.Name, br.Duration.Seconds(), float64(br.Size)/1e6)
	}

	var jobs []job
	for _, e := range p.Experiments {
		vs := p.InExperiment(e)
		for run := 1; run <= e.Params.Runs; run++ {
			for _, v := range vs {
				jobs = append(jobs, job{e: e, v: v, run: run})
			}
		}
	}
	clock := newETA(p.Pause)
	t0 := time.Now()
	for i, j := range jobs {
		if p.Pause > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(p.Pause):
			}
		}
		start := time.Now()
		rd, err := d.runOnce(ctx, exes[j.v.Binary], j.e, j.v, j.run)
		if err != nil {
			return res, err
		}
		clock.observe(j, time.Since(start))
		line := runLine(rd, j.params())
		rd.Timings = nil // Summarize reads them again, one configuration at a time
		res.Runs = append(res.Runs, *rd)
		fmt.Fprintf(progress, "[%d/%d %s, ETA %s] %s run %d/%d %-12s %s\n",
			i+1, len(jobs), human.Clock(time.Since(t0)), human.Clock(clock.remaining(jobs[i+1:])),
			j.e.Name, j.run, j.e.Params.Runs, j.v.Name, line)
	}
	return res, nil
}

// job is one run of one configuration in one experiment.
type job struct {
	e   Experiment
	v   *Variant
	run int
}

// params are the experiment's parameters with the configuration's call cap.
func (j job) params() Params {
	q := j.e.Params
	q.Calls = j.v.CallsFor(q)
	return q
}

// eta predicts how long the remaining runs take. A configuration's run takes
// about as long as its earlier runs in the same experiment did (the process,
// the trace counting, the pause). One not run yet in this experiment takes
// Params.estimate with the cost per monitored call the configuration showed in
// an earlier experiment (its run time less the method time and runOverhead),
// or etaPerCall if it never ran. Runs are interleaved, so after the first round
// of an experiment every prediction is a measured one.
type eta struct {
	pause   time.Duration
	spent   map[[2]string]time.Duration // per experiment and configuration
	count   map[[2]string]int
	perCall map[string]time.Duration // per configuration, from its latest run
}

// etaPerCall is the guess for a monitored call's cost before anything ran.
const etaPerCall = 100 * time.Nanosecond

func newETA(pause time.Duration) *eta {
	return &eta{pause: pause, spent: map[[2]string]time.Duration{}, count: map[[2]string]int{},
		perCall: map[string]time.Duration{}}
}

func (m *eta) observe(j job, d time.Duration) {
	k := [2]string{j.e.Name, j.v.Name}
	m.spent[k] += d
	m.count[k]++
	q := j.e.Params
	q.Calls = j.v.CallsFor(q)
	if calls := int64(q.Calls) * int64(q.Depth); calls > 0 {
		rest := d - runOverhead - time.Duration(q.Calls)*q.MethodTime
		m.perCall[j.v.Name] = max(rest, 0) / time.Duration(calls)
	}
}

func (m *eta) remaining(jobs []job) time.Duration {
	var d time.Duration
	for _, j := range jobs {
		d += m.pause
		k := [2]string{j.e.Name, j.v.Name}
		switch pc, ok := m.perCall[j.v.Name]; {
		case m.count[k] > 0:
			d += m.spent[k] / time.Duration(m.count[k])
		case ok:
			d += j.params().estimate(pc)
		default:
			d += j.params().estimate(etaPerCall)
		}
	}
	return d
}

// runLine summarises a run for the progress output; rd's timings are loaded.
func runLine(rd *RunData, q Params) string {
	steady := rd.AppendSteady(nil, q.Warmup)
	s := Compute(steady)
	line := fmt.Sprintf("median %s mean %s per call (%s per monitored call), clock pair %.1f ns, wall %.1fs, load %.1f",
		fmtNs(s.Median), fmtNs(s.Mean), fmtNs(s.Median/float64(q.Depth)), rd.ClockPairNs, rd.Wall.Seconds(), rd.LoadAvg)
	if t := rd.Trace; t != nil {
		line += fmt.Sprintf("\n    %d of %d %s written, %d lost (%.2f %%)", t.Written, t.Expected, t.Unit, t.Lost, 100*t.LostShare())
		if u := t.Unaccounted(); u != 0 {
			line += fmt.Sprintf(", %d unaccounted", u)
		}
	}
	for _, n := range rd.Notes {
		line += "\n    " + n
	}
	return line
}

func (d *Driver) runOnce(ctx context.Context, exe string, e Experiment, v *Variant, run int) (*RunData, error) {
	q := e.Params
	q.Calls = v.CallsFor(q)
	rel := runName(e.Name, v.Name, run)
	raw := filepath.Join(d.Dir, "raw", rel+".bin")
	logf := filepath.Join(d.Dir, "logs", rel+".log")
	for _, f := range []string{raw, logf} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return nil, err
		}
	}
	var scratch string
	var err error
	if d.KeepScratch {
		scratch = filepath.Join(d.Dir, "scratch", rel)
		err = os.MkdirAll(scratch, 0o755)
	} else {
		scratch, err = os.MkdirTemp("", "moobench-run-")
	}
	if err != nil {
		return nil, err
	}
	if !d.KeepScratch {
		defer os.RemoveAll(scratch)
	}
	if abs, err := filepath.Abs(raw); err == nil {
		raw = abs
	}
	subst := func(s string) string { return strings.ReplaceAll(s, "{scratch}", scratch) }
	args := []string{
		"-calls", strconv.Itoa(q.Calls),
		"-depth", strconv.Itoa(q.Depth),
		"-method-time", q.MethodTime.String(),
		"-goroutines", strconv.Itoa(q.Goroutines),
		"-out", raw,
	}
	if q.ClockPairs > 0 {
		args = append(args, "-clockpair", strconv.Itoa(q.ClockPairs))
	}
	for _, a := range v.Args {
		args = append(args, subst(a))
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = scratch
	cmd.Env = childEnv(os.Environ())
	for _, kv := range v.Env {
		cmd.Env = append(cmd.Env, subst(kv))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	load := LoadAverage()
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	if werr := os.WriteFile(logf, out.Bytes(), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return nil, fmt.Errorf("%s run %d of %s: %s %s: %w\n%s", v.Name, run, e.Name, exe, strings.Join(args, " "), err, tail(out.Bytes(), 4000))
	}
	rd, err := ReadRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("%s run %d of %s: %w", v.Name, run, e.Name, err)
	}
	if rd.Goroutines != q.Goroutines || rd.Calls != q.Calls || rd.Depth != q.Depth || rd.MethodTime != q.MethodTime {
		return nil, fmt.Errorf("%s run %d of %s: %s holds %d×%d calls at depth %d, %v; want %d×%d, %d, %v",
			v.Name, run, e.Name, raw, rd.Goroutines, rd.Calls, rd.Depth, rd.MethodTime, q.Goroutines, q.Calls, q.Depth, q.MethodTime)
	}
	rd.Experiment, rd.Variant, rd.Run = e.Name, v.Name, run
	rd.Log, rd.Wall, rd.LoadAvg = logf, wall, load
	if ps := cmd.ProcessState; ps != nil {
		rd.CPU = ps.UserTime() + ps.SystemTime()
	}
	rd.OutBytes = dirSize(scratch)
	rd.Notes = notes(out.Bytes())
	expected := int64(q.Calls) * int64(q.Depth) * int64(q.Goroutines)
	if v.Trace != "" {
		if rd.Trace, err = countTrace(subst(v.Trace), expected); err != nil {
			return nil, fmt.Errorf("%s run %d of %s: %w", v.Name, run, e.Name, err)
		}
	} else if rd.Trace = spanCounts(out.Bytes()); rd.Trace != nil {
		rd.Notes = slices.DeleteFunc(rd.Notes, func(n string) bool { return strings.Contains(n, "spans started=") })
	}
	return rd, nil
}

// runName is where a run's files go under the results directory's raw/, logs/
// and scratch/, without the extension.
func runName(experiment, variant string, run int) string {
	return filepath.Join(experiment, variant, fmt.Sprintf("run-%02d", run))
}

// childEnv is the driver's environment without TIGRIS_* and OTEL_* variables,
// which only a configuration may set.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "TIGRIS_") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// notes picks the lines of a run's output worth carrying into the report: the
// peer's span counts and whatever tigris reports (drops, errors), at most 10.
func notes(out []byte) []string {
	var ns []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() && len(ns) < 10 {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			ns = append(ns, line)
		}
	}
	return ns
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// LoadAverage is the system's 1-minute load average, 0 where it does not tell
// (Linux /proc/loadavg only).
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	x, _ := strconv.ParseFloat(f[0], 64)
	return x
}

// MachineEnvironment describes this machine and the go command's toolchain,
// as every Results of a plan does.
func MachineEnvironment() Environment { return environment() }

func environment() Environment {
	e := Environment{
		GoVersion: runtime.Version(),
		GOOS:      runtime.GOOS,
		GOARCH:    runtime.GOARCH,
		NumCPU:    runtime.NumCPU(),
		LoadAvg:   LoadAverage(),
	}
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		e.GoVersion = strings.TrimSpace(string(out)) // the toolchain that builds the variants
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	return e
}
