package probecost

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/bench/realcode"
)

// workload is a program built plain and through tigris, and the runs of it
// the harness compares: plain, probes off, phase 1 as configured, every call
// timed, fine into the null writer.
type workload struct {
	name        string
	plain, inst string   // binaries
	args        []string // of every run
	dir         string   // where every run runs
	env         []string // of every instrumented run
	op          string
	ops         int64 // operations a dump holds, where op is ""
	measured    []string
	dumpEvery   int64 // basic blocks between callgrind's dumps
	// short, when set, are the arguments of a shorter run of each: an
	// operation too long for the dumps to cut whole ones is measured as
	// the difference of two runs (dumpEvery 0).
	short []string
}

func (w workload) runs() []Run {
	r := func(name, bin string, env ...string) Run {
		if bin == w.inst {
			env = append(append([]string(nil), w.env...), env...)
		}
		return Run{Name: w.name + " " + name, Bin: bin, Args: w.args, Dir: w.dir, Env: env, Op: w.op, Ops: w.ops, Measured: w.measured}
	}
	return []Run{
		r("plain", w.plain),
		r("off", w.inst, "TIGRIS_MODE=off"),
		r("phase 1", w.inst, "TIGRIS_MODE=coarse"),
		r("coarse, every call timed", w.inst, "TIGRIS_MODE=coarse", "TIGRIS_COARSE_BUDGET=0"),
		r("fine, null writer", w.inst, "TIGRIS_MODE=fine", "TIGRIS_WRITER=null", "TIGRIS_COARSE_BUDGET=0"),
	}
}

// TestProbeCost measures what a probed call costs, counted under valgrind's
// callgrind with its cache and branch simulators, in MooBench's recursive
// method and in fastjson's own Parse benchmarks (a small document, whose
// parser's data stay in the first-level cache, and the 617 KB twitter
// document, which does not), each built plain and through tigris with the
// config tigris init writes, and run plain, off, under phase 1, coarse with
// every call timed and fine into the null writer. It prints, per run, the
// instructions, cache misses and mispredicted branches per probed call
// beyond plain's, split by where they are spent (docs/performance.md, "Why
// a probed call in real code costs more than MooBench's").
//
// It takes some ten minutes of one CPU, fetches fastjson through the module
// proxy, and runs only with TIGRIS_PROBECOST=1 (and valgrind installed);
// TIGRIS_PROBECOST_OUT names a file for the tables, TIGRIS_PROBECOST_TIGRIS
// a tigris executable to build with instead of one built from this checkout,
// TIGRIS_PROBECOST_WORK a directory that keeps the binaries and callgrind's
// files (an empty one: the copy of fastjson goes there).
func TestProbeCost(t *testing.T) {
	valgrind, work, root, tigris := setup(t)
	ctx := context.Background()
	moo := workload{name: "MooBench", plain: filepath.Join(work, "moobench.plain"), inst: filepath.Join(work, "moobench.tigris"),
		args: []string{"-calls", "300000", "-depth", "10", "-clockpair", "0"},
		op:   "main.monitoredMethod", measured: []string{"main.monitored"}, dumpEvery: 10_000_000}
	run(t, root, "go", "build", "-o", moo.plain, "./examples/moobench")
	run(t, filepath.Join(root, "examples", "moobench"), tigris, "go", "build", "-o", moo.inst, ".")

	var fj realcode.Module
	for _, m := range realcode.Modules {
		if m.Name == "fastjson" {
			fj = m
		}
	}
	dl := run(t, work, "go", "mod", "download", "-json", fj.Path+"@"+fj.Version)
	var info struct{ Dir string }
	if err := json.Unmarshal([]byte(dl), &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v\n%s", fj.Path, fj.Version, err, dl)
	}
	src := filepath.Join(work, "fastjson")
	run(t, work, "cp", "-R", info.Dir, src) // valgrind runs where cp does
	run(t, work, "chmod", "-R", "u+w", src)
	run(t, src, tigris, "init")
	small := workload{name: "fastjson small", dir: src, plain: filepath.Join(work, "fastjson.plain.test"), inst: filepath.Join(work, "fastjson.tigris.test"),
		args: []string{"-test.run=^$", "-test.bench=^BenchmarkParse$/^small$/^fastjson$", "-test.benchtime=100000x", "-test.cpu=1"},
		op:   "github.com/valyala/fastjson.(*Parser).Parse", measured: []string{"github.com/valyala/fastjson."}, dumpEvery: 50_000_000}
	run(t, src, "go", "test", "-c", "-o", small.plain, ".")
	run(t, src, tigris, "go", "test", "-c", "-o", small.inst, ".")
	twitter := small
	twitter.name = "fastjson twitter"
	twitter.args = []string{"-test.run=^$", "-test.bench=^BenchmarkParse$/^twitter$/^fastjson$", "-test.benchtime=30x", "-test.cpu=1"}
	twitter.short = []string{"-test.run=^$", "-test.bench=^BenchmarkParse$/^twitter$/^fastjson$", "-test.benchtime=10x", "-test.cpu=1"}
	twitter.dumpEvery = 0

	var report bytes.Buffer
	for _, w := range []workload{moo, small, twitter} {
		w.measure(t, &report, func(r Run) (*Profile, error) {
			p, err := Callgrind(ctx, valgrind, r, work, w.dumpEvery)
			if err != nil || w.short == nil {
				return p, err
			}
			r.Name, r.Args = r.Name+" short", w.short
			q, err := Callgrind(ctx, valgrind, r, work, 0)
			if err != nil {
				return nil, err
			}
			return p.Minus(q), nil
		})
	}
	output(t, report.Bytes(), "")
}

// measure profiles each of w's runs with profile, checks the counts and
// writes w's table to report.
func (w workload) measure(t *testing.T, report *bytes.Buffer, profile func(Run) (*Profile, error)) {
	t.Helper()
	var bs []*Breakdown
	for _, r := range w.runs() {
		p, err := profile(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Analyze(r, p)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	check(t, w, bs)
	Table(report, bs[0], bs[3].ProbedCalls(), bs[1:]...)
}

// setup skips unless TIGRIS_PROBECOST=1 and returns valgrind, a work
// directory, the checkout's root and the tigris executable to build with.
func setup(t *testing.T) (valgrind, work, root, tigris string) {
	if os.Getenv("TIGRIS_PROBECOST") != "1" {
		t.Skip("set TIGRIS_PROBECOST=1 to count a probed call's cost under callgrind (minutes)")
	}
	valgrind, err := exec.LookPath("valgrind")
	if err != nil {
		t.Fatal("TIGRIS_PROBECOST=1 needs valgrind (Debian's valgrind package)")
	}
	work = os.Getenv("TIGRIS_PROBECOST_WORK")
	if work == "" {
		work = t.TempDir()
	}
	if root, err = filepath.Abs("../.."); err != nil {
		t.Fatal(err)
	}
	tigris = os.Getenv("TIGRIS_PROBECOST_TIGRIS")
	if tigris == "" {
		tigris = filepath.Join(work, "tigris")
		run(t, root, "go", "build", "-o", tigris, "./cmd/tigris")
	}
	return valgrind, work, root, tigris
}

// check fails the test where the counts of w's runs (in workload.runs'
// order) contradict what the probes do whatever they cost: the off path
// starts nothing, and with phase 1's budget off every probed call is
// started and timed.
func check(t *testing.T, w workload, bs []*Breakdown) {
	t.Helper()
	off, timed := bs[1], bs[3]
	probed := timed.ProbedCalls()
	if off.Starts() != 0 || probed == 0 {
		t.Errorf("%s: off starts %.2f calls an operation, every call timed %.2f; want 0 and more than 0", w.name, off.Starts(), probed)
	}
	if d := timed.Timed() - probed; d > 0.01*probed || d < -0.01*probed {
		t.Errorf("%s: with phase 1's budget off %.2f calls timed an operation of %.2f started; want all", w.name, timed.Timed(), probed)
	}
}

// output logs the tables and writes them to TIGRIS_PROBECOST_OUT (with
// suffix before its extension) when set.
func output(t *testing.T, report []byte, suffix string) {
	t.Logf("\n%s", report)
	out := os.Getenv("TIGRIS_PROBECOST_OUT")
	if out == "" {
		return
	}
	if suffix != "" {
		ext := filepath.Ext(out)
		out = strings.TrimSuffix(out, ext) + "-" + suffix + ext
	}
	if err := os.WriteFile(out, report, 0o666); err != nil {
		t.Fatal(err)
	}
}

// run runs argv in dir and returns its standard output; it fails the test
// with the output when the command fails.
func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s (in %s): %v\n%s%s", strings.Join(argv, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
