package realcode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/bench"
)

// Driver runs a plan.
type Driver struct {
	// Tigris is the tigris executable that builds the instrumented variants
	// and runs tigris init in every copy.
	Tigris string
	// Root is the tigris checkout Tigris was built from, "" if unknown: its
	// commit goes into the results.
	Root string
	// Work is where module copies and test binaries go; "" makes a
	// temporary directory, removed when the plan ends.
	Work string
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
}

// prepared is one module ready to run: its copy and a binary per build.
type prepared struct {
	mod  Module
	dir  string // the package's directory in the copy: benchmarks run there
	bins map[Build]string
}

// Run prepares every module of p (download, copy, tigris init, one test
// binary per build) and runs p's rounds. It returns the results also when it
// stops early (an interrupt, a canceled ctx), with the runs done.
func (d *Driver) Run(ctx context.Context, p Plan) (*Results, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	progress := d.Progress
	if progress == nil {
		progress = io.Discard
	}
	work := d.Work
	if work == "" {
		tmp, err := os.MkdirTemp("", "tigris-realcode-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o777); err != nil {
		return nil, err
	}
	res := &Results{Workload: Workload, Plan: p, Env: bench.MachineEnvironment(), Started: time.Now()}
	res.TigrisVersion, res.TigrisCommit = d.identify(ctx)
	finish := func() {
		res.Finished = time.Now()
		res.LoadAvgEnd = bench.LoadAverage()
	}

	var mods []*prepared
	smallKnown := true
	for _, m := range p.Modules {
		if err := ctx.Err(); err != nil {
			finish()
			return res, err
		}
		fmt.Fprintf(progress, "realcode: preparing %s %s\n", m.Path, m.Version)
		pm, mr, err := d.prepare(ctx, work, p, m, &smallKnown, progress)
		res.Modules = append(res.Modules, mr)
		if err != nil {
			finish()
			return res, fmt.Errorf("%s: %w", m.Name, err)
		}
		for _, b := range p.builds() {
			if e, failed := mr.BuildErrors[b]; failed {
				res.Notes = append(res.Notes, fmt.Sprintf("%s: the %s build failed; its variants have no runs: %s", m.Name, b, firstLine(e)))
			}
		}
		if mr.ProfileError != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("%s: profiling the plain build failed; no shares: %s", m.Name, firstLine(mr.ProfileError)))
		}
		mods = append(mods, pm)
	}
	if !smallKnown {
		res.Notes = append(res.Notes, `this tigris does not know monitor.small: the *-all builds probe the functions the compiler inlines (monitor.inlinable: probe) but not those its cost model leaves out`)
	}

	started := time.Now()
	total := p.Rounds * len(mods) * len(p.Variants)
	done := 0
	for r := range p.Rounds {
		for mi, pm := range mods {
			plainNs := map[string]float64{}
			for pos, v := range p.order(r, mi) {
				if err := ctx.Err(); err != nil {
					finish()
					return res, err
				}
				bin, ok := pm.bins[v.Build]
				if !ok {
					done++
					continue // its build failed: noted above
				}
				if p.Pause > 0 {
					select {
					case <-time.After(p.Pause):
					case <-ctx.Done():
						finish()
						return res, ctx.Err()
					}
				}
				run := d.runOnce(ctx, p, pm, bin, v, work)
				run.Round, run.Position = r, pos
				res.Runs = append(res.Runs, run)
				done++
				if v.Name == "plain" {
					plainNs = run.NsPerOp
				}
				d.report(progress, p, run, plainNs, v.Name == "plain", done, total, time.Since(started))
				if run.Error != "" && ctx.Err() != nil {
					finish()
					return res, ctx.Err()
				}
			}
		}
	}
	finish()
	return res, nil
}

// report prints one run's progress line: its benchmarks, their geometric
// mean against this round's plain run when that ran first, and the time left.
func (d *Driver) report(w io.Writer, p Plan, run Run, plainNs map[string]float64, isPlain bool, done, total int, elapsed time.Duration) {
	line := fmt.Sprintf("realcode: round %d/%d %-10s %-10s %2d benchmarks in %4.1fs", run.Round+1, p.Rounds, run.Module, run.Variant, len(run.NsPerOp), run.Seconds)
	if run.Error != "" {
		line += "  FAILED: " + firstLine(run.Error)
	} else if !isPlain && len(plainNs) > 0 {
		if g, n := geoRatio(run.NsPerOp, plainNs); n > 0 {
			line += fmt.Sprintf("  %s plain (this round)", formatRatio(g))
		}
	}
	if done < total && done > 0 {
		left := time.Duration(float64(elapsed) / float64(done) * float64(total-done)).Round(time.Second)
		line += fmt.Sprintf("  [%d/%d, ~%v left]", done, total, left)
	}
	fmt.Fprintln(w, line)
}

// geoRatio is the geometric mean of a[b]/base[b] over the benchmarks both
// have, and their number.
func geoRatio(a, base map[string]float64) (float64, int) {
	var sum float64
	n := 0
	for name, x := range a {
		if y, ok := base[name]; ok && x > 0 && y > 0 {
			sum += math.Log(x / y)
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return math.Exp(sum / float64(n)), n
}

// identify returns the tigris version line and, from Root, its commit.
func (d *Driver) identify(ctx context.Context) (version, commit string) {
	if out, err := exec.CommandContext(ctx, d.Tigris, "version").Output(); err == nil {
		version = firstLine(string(out))
	}
	if d.Root != "" {
		cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty", "--abbrev=7")
		cmd.Dir = d.Root
		if out, err := cmd.Output(); err == nil {
			commit = strings.TrimSpace(string(out))
		}
	}
	return version, commit
}

// goEnv is the environment of the go command and tigris in a copy: the
// inherited one without settings that would tie the build to this machine's
// setup, and no TIGRIS_ variable.
func goEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "GOFLAGS" || name == "GOWORK" || strings.HasPrefix(name, "TIGRIS_")
	})
	return append(env, "GOFLAGS=-mod=mod", "GOWORK=off")
}

// command runs argv in dir with env and returns its combined output; the
// error carries the output.
func command(ctx context.Context, dir string, env []string, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// prepare downloads m through the module proxy, copies it writable to work,
// runs tigris init there (tigris.yaml, and go.mod requiring the runtime),
// writes the configs of the floor and all builds, builds every test binary p
// needs and counts the probes of each tigris build. A failed build is
// recorded in the ModuleResult, not returned: the other builds still run.
func (d *Driver) prepare(ctx context.Context, work string, p Plan, m Module, smallKnown *bool, progress io.Writer) (*prepared, ModuleResult, error) {
	mr := ModuleResult{Name: m.Name, Path: m.Path, Version: m.Version, Probes: map[Build]Probes{}}
	env := goEnv()
	src, err := download(ctx, work, env, m)
	if err != nil {
		return nil, mr, err
	}
	root := filepath.Join(work, m.Name)
	if err := copyTree(src, root); err != nil {
		return nil, mr, fmt.Errorf("copying %s: %w", src, err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return nil, mr, fmt.Errorf("%s@%s has no go.mod", m.Path, m.Version)
	}
	if _, err := command(ctx, root, env, d.Tigris, "init"); err != nil {
		return nil, mr, err
	}
	initCfg, err := os.ReadFile(filepath.Join(root, "tigris.yaml"))
	if err != nil {
		return nil, mr, err
	}
	mr.Config = string(initCfg)
	cfgs := map[Build]string{BuildDefault: filepath.Join(root, "tigris.yaml")}
	writeCfg := func(b Build) error {
		text, err := underMonitor(string(initCfg), buildLines(b, *smallKnown)...)
		if err != nil {
			return err
		}
		cfgs[b] = filepath.Join(work, m.Name+"-"+string(b)+".yaml")
		return os.WriteFile(cfgs[b], []byte(text), 0o666)
	}
	for _, b := range []Build{BuildFloor, BuildAll, BuildFloorAll} {
		if err := writeCfg(b); err != nil {
			return nil, mr, err
		}
	}
	pm := &prepared{mod: m, dir: filepath.Join(root, filepath.FromSlash(m.Package)), bins: map[Build]string{}}
	pkg := "./" + strings.TrimPrefix(filepath.ToSlash(filepath.Clean(m.Package)), "./")
	if m.Package == "." || m.Package == "" {
		pkg = "."
	}
	for _, b := range p.builds() {
		if err := ctx.Err(); err != nil {
			return nil, mr, err
		}
		bin := filepath.Join(work, "bin", m.Name+"."+string(b)+".test")
		argv := []string{"go", "test", "-c", "-o", bin, pkg}
		if b != BuildPlain {
			argv = append([]string{d.Tigris, "--config", cfgs[b]}, argv...)
		}
		start := time.Now()
		_, err := command(ctx, root, env, argv...)
		if err != nil && (b == BuildAll || b == BuildFloorAll) && *smallKnown && strings.Contains(err.Error(), `unknown key "small"`) {
			*smallKnown = false
			for _, ab := range []Build{BuildAll, BuildFloorAll} {
				if werr := writeCfg(ab); werr != nil {
					return nil, mr, werr
				}
			}
			_, err = command(ctx, root, env, argv...)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, mr, ctx.Err()
			}
			if mr.BuildErrors == nil {
				mr.BuildErrors = map[Build]string{}
			}
			mr.BuildErrors[b] = err.Error()
			fmt.Fprintf(progress, "realcode:   %s build FAILED: %s\n", b, firstLine(err.Error()))
			continue
		}
		pm.bins[b] = bin
		line := fmt.Sprintf("realcode:   %-9s built in %.1fs", b, time.Since(start).Seconds())
		if b == BuildDefault || b == BuildAll {
			if n, err := d.countProbes(ctx, root, env, cfgs[b]); err == nil {
				mr.Probes[b] = n
				line += fmt.Sprintf("; %d of %d functions of the module probed", n.Instrumented, n.Functions)
			}
		}
		fmt.Fprintln(progress, line)
	}
	if _, ok := pm.bins[BuildPlain]; ok && p.ProfileTime > 0 {
		start := time.Now()
		sh, err := d.profile(ctx, p, pm, root, cfgs[BuildDefault], work)
		if err != nil {
			if ctx.Err() != nil {
				return nil, mr, ctx.Err()
			}
			mr.ProfileError = err.Error()
			fmt.Fprintf(progress, "realcode:   profile FAILED: %s\n", firstLine(err.Error()))
		} else {
			mr.Shares = &sh
			fmt.Fprintf(progress, "realcode:   profiled in %.1fs: %d samples in the module; default probes: inclusive %s, exclusive %s, measured %s\n",
				time.Since(start).Seconds(), sh.Samples, percent(sh.Inclusive), percent(sh.Exclusive), percent(sh.Measured))
		}
	}
	return pm, mr, nil
}

// buildLines are the lines a build adds under monitor: to the config tigris
// init writes; without small: probe where this tigris does not know it.
func buildLines(b Build, smallKnown bool) []string {
	var lines []string
	switch b {
	case BuildFloor:
		lines = []string{"floor: true"}
	case BuildAll:
		lines = []string{"inlinable: probe", "small: probe"}
	case BuildFloorAll:
		lines = []string{"floor: true", "inlinable: probe", "small: probe"}
	}
	if !smallKnown {
		lines = slices.DeleteFunc(lines, func(l string) bool { return l == "small: probe" })
	}
	return lines
}

var matchSummary = regexp.MustCompile(`(?m)^(\d+) of (\d+) functions in \d+ packages? instrumented`)

// countProbes runs tigris match over the whole module with cfg and returns
// its summary's counts.
func (d *Driver) countProbes(ctx context.Context, root string, env []string, cfg string) (Probes, error) {
	out, err := command(ctx, root, env, d.Tigris, "match", "--config", cfg, "./...")
	if err != nil {
		return Probes{}, err
	}
	m := matchSummary.FindStringSubmatch(out)
	if m == nil {
		return Probes{}, errors.New("tigris match printed no summary")
	}
	var p Probes
	p.Instrumented, _ = strconv.Atoi(m[1])
	p.Functions, _ = strconv.Atoi(m[2])
	return p, nil
}

// underMonitor adds lines (two-space indented) under the monitor: key of a
// config as tigris init writes it.
func underMonitor(cfg string, lines ...string) (string, error) {
	const key = "\nmonitor:\n"
	i := strings.Index(cfg, key)
	if i < 0 {
		return "", errors.New("the tigris.yaml tigris init wrote has no monitor: section")
	}
	var add strings.Builder
	for _, l := range lines {
		add.WriteString("  " + l + "\n")
	}
	at := i + len(key)
	return cfg[:at] + add.String() + cfg[at:], nil
}

// download fetches m through the module proxy (go mod download, which the
// module cache answers when it has it) and returns its directory there.
func download(ctx context.Context, work string, env []string, m Module) (string, error) {
	out, err := command(ctx, work, env, "go", "mod", "download", "-json", m.Path+"@"+m.Version)
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal([]byte(out), &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", m.Path, m.Version, info.Error)
	}
	if err != nil {
		return "", err
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s named no directory:\n%s", m.Path, m.Version, out)
	}
	return info.Dir, nil
}

// copyTree copies the module cache's read-only tree src to dst, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// benchLine is one result line of go test -bench: the name, the iterations,
// the time per operation.
var benchLine = regexp.MustCompile(`^(Benchmark\S*)\s+(\d+)\s+([0-9.]+(?:e[+-]?\d+)?) ns/op`)

// parseBench returns the time per operation of every benchmark in the output
// of a test binary run with -test.bench.
func parseBench(out string) map[string]float64 {
	ns := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(strings.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		if x, err := strconv.ParseFloat(m[3], 64); err == nil && x > 0 {
			ns[m[1]] = x
		}
	}
	return ns
}

// benchEnv is the environment of a test binary: the inherited one without
// TIGRIS_ variables, GOMAXPROCS and GODEBUG.
func benchEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "TIGRIS_") || name == "GOMAXPROCS" || name == "GODEBUG"
	})
}

// runOnce runs every benchmark expression of the module once with variant v's
// binary, in the package's directory (benchmarks read testdata relative to
// it). A fine run writes its trace to a scratch directory, removed after.
func (d *Driver) runOnce(ctx context.Context, p Plan, pm *prepared, bin string, v Variant, work string) (run Run) {
	run = Run{Module: pm.mod.Name, Variant: v.Name, NsPerOp: map[string]float64{}}
	start := time.Now()
	defer func() { run.Seconds = time.Since(start).Seconds() }()
	env := benchEnv()
	benchtime := p.BenchTime
	if v.Mode != "" {
		env = append(env, "TIGRIS_MODE="+v.Mode)
	}
	if v.Mode == "fine" {
		benchtime = p.FineBenchTime
		scratch, err := os.MkdirTemp(work, "trace-")
		if err != nil {
			run.Error = err.Error()
			return run
		}
		defer os.RemoveAll(scratch)
		env = append(env, "TIGRIS_OUT="+filepath.Join(scratch, "{binary}-{pid}.tgr"))
	}
	for _, expr := range pm.mod.Bench {
		args := []string{"-test.run=^$", "-test.bench=" + expr, "-test.benchtime=" + benchtime.String(),
			"-test.count=1", "-test.cpu=1"}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir, cmd.Env = pm.dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		got := parseBench(out.String())
		for name, x := range got {
			run.NsPerOp[name] = x
		}
		if err == nil && len(got) == 0 {
			err = errors.New("no benchmark matched")
		}
		if err != nil {
			run.Error = fmt.Sprintf("%s -test.bench=%s: %v%s\n%s", filepath.Base(bin), expr, err, failure(out.String()), lastLines(out.String(), 20))
			return run
		}
	}
	return run
}

// failure is what a failed test binary said first: its first "--- FAIL"
// line with the one after it (the message), or its panic, as ": …"; "" if
// neither.
func failure(out string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "--- FAIL"):
			if i+1 < len(lines) {
				l += " " + strings.TrimSpace(lines[i+1])
			}
			return ": " + l
		case strings.HasPrefix(l, "panic: "):
			return ": " + l
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
