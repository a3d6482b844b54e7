package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// WriteModule writes the throwaway module into dir: go.mod requiring every
// module of suites at its pinned version and tigris replaced to tigrisRoot,
// tigris's go.sum as a start, tigris.yaml (Config) and one Go file, so the
// module has a package of its own.
func WriteModule(dir, tigrisRoot, goVersion string, suites []Suite) error {
	var b strings.Builder
	fmt.Fprintf(&b, "module example.com/tigriscompat\n\ngo %s\n\nrequire (\n\tgithub.com/tigrisgo/tigris/runtime v0.0.0\n", goVersion)
	for _, s := range suites {
		if s.Module != "" {
			fmt.Fprintf(&b, "\t%s %s\n", s.Module, s.Version)
		}
	}
	fmt.Fprintf(&b, ")\n\nreplace github.com/tigrisgo/tigris/runtime => %s\n", filepath.Join(tigrisRoot, "runtime"))
	sum, err := os.ReadFile(filepath.Join(tigrisRoot, "runtime", "go.sum"))
	if err != nil {
		return fmt.Errorf("reading tigris's go.sum: %w", err)
	}
	files := map[string][]byte{
		"go.mod":      []byte(b.String()),
		"go.sum":      sum,
		"tigris.yaml": []byte(Config()),
		// The monitor is imported so that go.sum covers its dependencies.
		"compat.go": []byte("// Package tigriscompat is the compatibility harness's throwaway module.\npackage tigriscompat\n\nimport _ \"github.com/tigrisgo/tigris/runtime/monitor\"\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o666); err != nil {
			return err
		}
	}
	return nil
}

// Runner runs go and tigris in the throwaway module.
type Runner struct {
	Go     string   // the go command
	Tigris string   // the tigris binary
	Dir    string   // the throwaway module (WriteModule)
	Env    []string // the environment of every command (GOCACHE, GOPROXY, ...); GOFLAGS is set by the runner
	Out    string   // where instrumented runs write their traces (a directory per suite)
	// Timeout bounds each go test command (-timeout is four times as long per
	// test binary); 0 means 30 minutes.
	Timeout time.Duration
	// CleanBuild makes Build use a new, empty GOCACHE for every call, so the
	// build measures a clean build including the standard library.
	CleanBuild bool
}

// Prepare completes go.sum for every suite's packages and their tests (through
// the module proxy) and checks that each module resolved to its pinned version.
func (r *Runner) Prepare(ctx context.Context, suites []Suite) error {
	args := []string{"list", "-mod=mod", "-e", "-deps", "-test", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}"}
	var mods []string
	for _, s := range suites {
		args = append(args, s.Patterns()...)
		if s.Module != "" {
			mods = append(mods, s.Module)
		}
	}
	out, err := r.output(ctx, r.Go, nil, args...)
	if err != nil {
		return fmt.Errorf("completing go.sum: %w", err)
	}
	if msg := strings.TrimSpace(string(out)); msg != "" {
		return fmt.Errorf("loading the suites' packages:\n%s", msg)
	}
	if len(mods) == 0 {
		return nil
	}
	out, err = r.output(ctx, r.Go, nil, append([]string{"list", "-mod=readonly", "-m", "-f", "{{.Path}} {{.Version}}"}, mods...)...)
	if err != nil {
		return fmt.Errorf("listing the modules: %w", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, version, ok := strings.Cut(line, " "); ok {
			got[path] = version
		}
	}
	for _, s := range suites {
		if s.Module != "" && got[s.Module] != s.Version {
			return fmt.Errorf("module %s resolved to %q, not the pinned %s (another suite's module requires a newer one; pin that)", s.Module, got[s.Module], s.Version)
		}
	}
	return nil
}

// Mode is how a suite is run.
type Mode string

const (
	Plain        Mode = "plain"        // go test
	Instrumented Mode = "instrumented" // tigris go test, fine mode, async writer
)

// Result is one go test run of one suite.
type Result struct {
	Suite Suite
	Mode  Mode
	// Verdicts maps "package TestName" (and "package" for the package as a
	// whole) to the last of pass, fail or skip go test -json reported.
	Verdicts map[string]string
	Wall     time.Duration
	MaxRSS   int64  // peak resident memory of any one process of the run, bytes; 0 if unknown
	ExitCode int    // of go test
	Output   []byte // go test's stderr and the Output lines of failed tests, for diagnosis
	// LostAtExit is what the instrumented test binaries said they lost when
	// they exited (LostAtExit): all of it, where reading the traces may stop
	// early (maxRecordsRead).
	LostAtExit uint64
}

// lossLine is the line a monitored program prints at exit when it lost fine
// records (monitor's output.go): "tigris: 12 of 3400 fine records lost ...".
var lossLine = regexp.MustCompile(`tigris: (\d+) of \d+ fine records lost`)

// LostAtExit sums the records the loss lines in out say were lost; out may
// be go test -json events, whose Output fields hold the lines.
func LostAtExit(out []byte) uint64 {
	var n uint64
	for _, m := range lossLine.FindAllSubmatch(out, -1) {
		var k uint64
		fmt.Sscan(string(m[1]), &k)
		n += k
	}
	return n
}

// Counts returns how many tests (not packages) passed, failed and were skipped.
func (res *Result) Counts() (pass, fail, skip int) {
	for k, v := range res.Verdicts {
		if !strings.Contains(k, " ") {
			continue
		}
		switch v {
		case "pass":
			pass++
		case "fail":
			fail++
		case "skip":
			skip++
		}
	}
	return
}

// Build compiles and links every test binary of the suite without running a
// test (go test -run=^$), to measure the build.
func (r *Runner) Build(ctx context.Context, s Suite, mode Mode) (*Result, error) {
	env := []string{}
	if r.CleanBuild {
		cache, err := os.MkdirTemp("", "tigris-compat-cache-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(cache)
		env = append(env, "GOCACHE="+cache, "XDG_CACHE_HOME="+cache)
	}
	return r.goTest(ctx, s, mode, env, "-run=^$")
}

// Run runs the suite's tests in mode.
func (r *Runner) Run(ctx context.Context, s Suite, mode Mode) (*Result, error) {
	return r.goTest(ctx, s, mode, nil)
}

func (r *Runner) goTest(ctx context.Context, s Suite, mode Mode, env []string, extra ...string) (*Result, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"test", "-json", "-count=1", fmt.Sprintf("-timeout=%s", 4*timeout)}
	args = append(append(args, extra...), s.Patterns()...)
	exe := r.Go
	if mode == Instrumented {
		exe = r.Tigris
		args = append([]string{"go"}, args...)
		out := r.TraceDir(s)
		if err := os.MkdirAll(out, 0o777); err != nil {
			return nil, err
		}
		// The caller's env comes last and wins.
		env = append([]string{"TIGRIS_MODE=fine", "TIGRIS_WRITER=async",
			"TIGRIS_OUT=" + filepath.Join(out, "{binary}-{pid}.tgr")}, env...)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	res := &Result{Suite: s, Mode: mode, Wall: time.Since(start), MaxRSS: maxRSS(cmd.ProcessState)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, fmt.Errorf("running %s %s: %w", exe, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s %s: %w after %v\n%s", exe, strings.Join(args, " "), ctx.Err(), timeout, stderr.Bytes())
	}
	verdicts, failed, err := ParseTestJSON(&stdout)
	if err != nil {
		return nil, fmt.Errorf("reading go test -json output of %s: %w\n%s", s.Name, err, stderr.Bytes())
	}
	res.Verdicts = verdicts
	res.Output = append(stderr.Bytes(), failed...)
	if mode == Instrumented {
		res.LostAtExit = LostAtExit(stdout.Bytes()) + LostAtExit(stderr.Bytes())
	}
	if len(verdicts) == 0 {
		return res, fmt.Errorf("%s %s reported no package (exit status %d)\n%s", exe, strings.Join(args, " "), res.ExitCode, res.Output)
	}
	return res, nil
}

// TraceDir is where the instrumented run of s writes its traces.
func (r *Runner) TraceDir(s Suite) string {
	return filepath.Join(r.Out, strings.NewReplacer("/", "_", " ", "_").Replace(s.Name))
}

func (r *Runner) environ(extra []string) []string {
	drop := func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "GOFLAGS" || strings.HasPrefix(name, "TIGRIS_")
	}
	var env []string
	for _, kv := range r.Env {
		if !drop(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, "GOFLAGS=-mod=readonly", "GOWORK=off")
	return append(env, extra...)
}

func (r *Runner) output(ctx context.Context, exe string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ(env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", exe, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// testEvent is the part of a go test -json event the harness reads.
type testEvent struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // of build-output events
}

// ParseTestJSON reads a go test -json stream and returns the last verdict
// (pass, fail, skip) of every test ("package TestName") and package
// ("package"), and the output of the tests and packages that failed.
func ParseTestJSON(rd io.Reader) (map[string]string, []byte, error) {
	verdicts := map[string]string{}
	outputs := map[string]*bytes.Buffer{}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var other bytes.Buffer
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			other.Write(line) // build output of older toolchains
			other.WriteByte('\n')
			continue
		}
		var ev testEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, nil, fmt.Errorf("parsing %q: %w", line, err)
		}
		if ev.Package == "" {
			if ev.Action == "build-output" && other.Len() < 256*1024 {
				other.WriteString(ev.Output)
			}
			continue
		}
		key := ev.Package
		if ev.Test != "" {
			key += " " + ev.Test
		}
		switch ev.Action {
		case "pass", "fail", "skip":
			verdicts[key] = ev.Action
		case "output", "build-output":
			b := outputs[key]
			if b == nil {
				b = new(bytes.Buffer)
				outputs[key] = b
			}
			if b.Len() < 64*1024 {
				b.WriteString(ev.Output)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	var failed bytes.Buffer
	failed.Write(other.Bytes())
	for _, k := range sorted.Keys(verdicts) {
		if verdicts[k] == "fail" && outputs[k] != nil {
			fmt.Fprintf(&failed, "--- %s\n%s", k, outputs[k].Bytes())
		}
	}
	return verdicts, failed.Bytes(), nil
}

// Compare returns one line per test or package whose verdict differs between
// the plain and the instrumented run ("missing" when one run did not report
// it), sorted.
//
// Subtests named after run-time values (a pointer, json-iterator's
// Test_marshal/[4]0xc000123450; a time, testify's ObjectsAreEqualValues(
// time.Date(2026, ...))) get other names in every run: a test only the plain
// run has and one only the instrumented run has are paired when their names
// are equal with every run of digits masked and their verdicts agree.
func Compare(plain, inst map[string]string) []string {
	var diffs []string
	onlyPlain := map[string][]string{} // masked name+verdict → keys
	for k, p := range plain {
		if i, ok := inst[k]; !ok {
			m := masked(k, p)
			onlyPlain[m] = append(onlyPlain[m], k)
		} else if i != p {
			diffs = append(diffs, fmt.Sprintf("%s: plain %s, instrumented %s", k, p, i))
		}
	}
	for _, k := range sorted.Keys(inst) {
		if _, ok := plain[k]; ok {
			continue
		}
		m := masked(k, inst[k])
		if ks := onlyPlain[m]; len(ks) > 0 {
			onlyPlain[m] = ks[1:]
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: plain missing, instrumented %s", k, inst[k]))
	}
	for _, ks := range onlyPlain {
		for _, k := range ks {
			diffs = append(diffs, fmt.Sprintf("%s: plain %s, instrumented missing", k, plain[k]))
		}
	}
	sort.Strings(diffs)
	return diffs
}

var digits = regexp.MustCompile(`[0-9a-f]*[0-9][0-9a-f]*`)

// masked is a test's key with every run of (hex) digits masked, and its verdict.
func masked(key, verdict string) string {
	return digits.ReplaceAllString(key, "#") + "\x00" + verdict
}

// Retry runs the top-level tests behind diffs again, plainly and
// instrumented, up to attempts times, and returns the differences that
// persisted and those that went away in some attempt (flaky tests: their
// verdict depends on timing or random input, not on tigris).
func (r *Runner) Retry(ctx context.Context, s Suite, diffs []string, attempts int) (persistent, flaky []string, err error) {
	byPkg := map[string]map[string]bool{} // package → top-level tests
	for _, d := range diffs {
		key, _, _ := strings.Cut(d, ": ")
		pkg, test, ok := strings.Cut(key, " ")
		if !ok {
			continue // a package verdict follows its tests'
		}
		top, _, _ := strings.Cut(test, "/")
		if byPkg[pkg] == nil {
			byPkg[pkg] = map[string]bool{}
		}
		byPkg[pkg][top] = true
	}
	settled := map[string]bool{}
	for _, pkg := range sorted.Keys(byPkg) {
		var names []string
		for _, t := range sorted.Keys(byPkg[pkg]) {
			names = append(names, regexp.QuoteMeta(t))
		}
		one := Suite{Name: s.Name, Packages: []string{pkg}}
		run := "-run=^(" + strings.Join(names, "|") + ")$"
		for a := 0; a < attempts; a++ {
			plain, err := r.goTest(ctx, one, Plain, nil, run)
			if err != nil {
				return nil, nil, err
			}
			inst, err := r.goTest(ctx, one, Instrumented, []string{"TIGRIS_OUT=" + filepath.Join(r.TraceDir(s), "retry", "{binary}-{pid}.tgr")}, run)
			if err != nil {
				return nil, nil, err
			}
			for k, v := range plain.Verdicts {
				if strings.Contains(k, " ") && inst.Verdicts[k] == v {
					settled[k] = true
				}
			}
		}
	}
	for _, d := range diffs {
		key, _, _ := strings.Cut(d, ": ")
		pkg, _, isTest := strings.Cut(key, " ")
		ok := settled[key]
		if !isTest { // a package verdict: settled when all its differing tests are
			ok = byPkg[pkg] != nil
			for _, d2 := range diffs {
				k2, _, _ := strings.Cut(d2, ": ")
				if p2, _, t2 := strings.Cut(k2, " "); t2 && p2 == pkg && !settled[k2] {
					ok = false
				}
			}
		}
		if ok {
			flaky = append(flaky, d)
		} else {
			persistent = append(persistent, d)
		}
	}
	return persistent, flaky, nil
}

// Unexpected returns the differences of diffs (Compare's lines) that s does
// not expect, and the expected ones that did not occur.
func (s Suite) Unexpected(diffs []string) (unexpected, missing []string) {
	occurred := map[string]bool{}
	for _, d := range diffs {
		key, _, _ := strings.Cut(d, ": ")
		// An expected test covers its subtests ("pkg TestX" covers "pkg TestX/a").
		for k := key; ; {
			if _, ok := s.Expected[k]; ok {
				occurred[k] = true
				break
			}
			i := strings.LastIndexByte(k, '/')
			if i < 0 || !strings.Contains(k[:i], " ") {
				unexpected = append(unexpected, d)
				break
			}
			k = k[:i]
		}
	}
	for _, k := range sorted.Keys(s.Expected) {
		if !occurred[k] {
			missing = append(missing, k)
		}
	}
	return unexpected, missing
}

// TraceStats is what the fine traces of one instrumented run hold.
type TraceStats struct {
	Files int
	Bytes int64 // size of the trace files
	// Truncated counts files of which only the first maxRecordsRead records
	// were read (a fine trace of a test binary reaches gigabytes).
	Truncated int
	Records   map[string]int64 // fine records per package
	Probes    map[string]int   // probes that recorded at least once, per package
	Lost      uint64           // records the writers reported dropped
	Damaged   int64            // bad chunks and gaps (a torn or corrupt file)
}

// rotated matches the files rotation adds (writer.RotatedPath): x.1.tgr.
var rotated = regexp.MustCompile(`\.[0-9]+\.tgr$`)

// maxRecordsRead bounds the records ReadTraces reads per file: enough to see
// which packages recorded, in seconds.
const maxRecordsRead = 2_000_000

// ReadTraces reads every trace file in dir (at most maxRecordsRead records
// of each).
func ReadTraces(dir string) (*TraceStats, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tgr"))
	if err != nil {
		return nil, err
	}
	ts := &TraceStats{Records: map[string]int64{}, Probes: map[string]int{}}
	for _, f := range files {
		if rotated.MatchString(f) {
			continue // a continuation, read with its first file
		}
		rd, err := writer.Open(f)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", f, err)
		}
		ts.Files++
		if fi, err := os.Stat(f); err == nil {
			ts.Bytes += fi.Size()
		}
		seen := map[uint32]bool{}
		var n int
		for {
			it, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				rd.Close()
				return nil, fmt.Errorf("reading %s: %w", f, err)
			}
			if it.Kind != writer.KindRecord {
				continue
			}
			if n++; n > maxRecordsRead {
				ts.Truncated++
				break
			}
			def := rd.Probe(it.Record.Probe)
			if def == nil {
				continue
			}
			ts.Records[def.Package]++
			if !seen[def.ID] {
				seen[def.ID] = true
				ts.Probes[def.Package]++
			}
		}
		st := rd.Stats()
		ts.Lost += st.Lost
		ts.Damaged += st.BadChunks + st.Gaps
		rd.Close()
	}
	return ts, nil
}

// Check returns what is wrong with the traces of suite s: no trace at all, a
// package the suite names that recorded nothing, a package that must stay
// uninstrumented but recorded, damaged files, and lost records, which the
// default writer settings never lose (lostAtExit is Result.LostAtExit of the
// run, the loss records ReadTraces saw are the rest). Probes of packages
// outside the suite (other suites' modules that a test imports) are fine.
func (ts *TraceStats) Check(s Suite, lostAtExit uint64) []string {
	var problems []string
	if lost := max(ts.Lost, lostAtExit); lost > 0 {
		problems = append(problems, fmt.Sprintf("%d fine records lost with the default writer settings (writer.on-full: block loses none)", lost))
	}
	if ts.Files == 0 {
		if s.Std() && len(s.Uninstrumented) == len(s.Packages) {
			return problems // test binaries without probes write no trace
		}
		return append(problems, "no trace file was written")
	}
	if ts.Damaged > 0 {
		problems = append(problems, fmt.Sprintf("%d damaged chunks or gaps in the trace files", ts.Damaged))
	}
	for pkg := range ts.Records {
		if slices.Contains(s.Uninstrumented, pkg) {
			problems = append(problems, fmt.Sprintf("%s must not be instrumented (the monitor runtime depends on it), but it recorded %d calls", pkg, ts.Records[pkg]))
		}
	}
	if s.Std() {
		for _, p := range s.Packages {
			if !slices.Contains(s.Uninstrumented, p) && ts.Records[p] == 0 {
				problems = append(problems, fmt.Sprintf("%s recorded no call: was it instrumented?", p))
			}
		}
	} else if ts.OwnRecords(s) == 0 {
		problems = append(problems, fmt.Sprintf("no package of %s recorded a call: was it instrumented?", s.Module))
	}
	sort.Strings(problems)
	return problems
}

// OwnRecords counts the records and probes of the suite's own packages.
func (ts *TraceStats) OwnRecords(s Suite) int64 {
	var n int64
	for pkg, c := range ts.Records {
		if s.owns(pkg) {
			n += c
		}
	}
	return n
}

// OwnProbes counts the probes of the suite's own packages that recorded, and
// the packages they belong to.
func (ts *TraceStats) OwnProbes(s Suite) (probes, packages int) {
	for pkg, c := range ts.Probes {
		if s.owns(pkg) {
			probes += c
			packages++
		}
	}
	return
}
