package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// offPathFiles is a package of functions of the shapes the rewriter treats
// differently (error and sized results, named and unnamed, no results, many
// returns, a generic function, a method, one with a defer of its own), each
// kept out of line so that each benchmark measures one call of it.
var offPathFiles = map[string]string{
	"tigris.yaml": "version: 1\nmonitor:\n  include: [\"within(example.com/itest/hot)\"]\n  small: probe\n",
	"hot/hot.go": `package hot

import (
	"errors"
	"sync"
)

var errBad = errors.New("bad")

//go:noinline
func Number(s string) (string, string, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || c == '.' || c == '-' {
			continue
		}
		if i == 0 {
			return "", s, errBad
		}
		return s[:i], s[i:], nil
	}
	return s, "", nil
}

//go:noinline
func Sum(xs []int) (total int) {
	for _, x := range xs {
		total += x
	}
	return
}

//go:noinline
func Kind(c byte) int {
	switch c {
	case 'a':
		return 1
	case 'b':
		return 2
	case 'c':
		return 3
	case 'd':
		return 4
	case 'e':
		return 5
	case 'f':
		return 6
	case 'g':
		return 7
	case 'h':
		return 8
	case 'i':
		return 9
	case 'j':
		return 10
	case 'k':
		return 11
	case 'l':
		return 12
	case 'm':
		return 13
	case 'n':
		return 14
	case 'o':
		return 15
	case 'p':
		return 16
	}
	return 0
}

var total int

//go:noinline
func Add(n int) { total += n }

//go:noinline
func Max[T int | string](a, b T) T {
	if a > b {
		return a
	}
	return b
}

type Buf struct{ b []byte }

//go:noinline
func (b *Buf) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, errBad
	}
	b.b = append(b.b[:0], p...)
	return len(p), nil
}

var mu sync.Mutex

//go:noinline
func Locked(n int) int {
	mu.Lock()
	defer mu.Unlock()
	return n + 1
}
`,
	"hot/hot_test.go": `package hot

import "testing"

var sinkS string
var sinkI int

func BenchmarkNumber(b *testing.B) {
	in := []string{"123.5,", "x", "-7e", "99999]"}
	for i := 0; i < b.N; i++ {
		a, _, _ := Number(in[i&3])
		sinkS = a
	}
}

func BenchmarkSum(b *testing.B) {
	xs := []int{1, 2, 3, 4}
	for i := 0; i < b.N; i++ {
		sinkI = Sum(xs)
	}
}

func BenchmarkKind(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkI = Kind(byte('a' + i&15))
	}
}

func BenchmarkAdd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Add(i)
	}
}

func BenchmarkMax(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkI = Max(i, 7)
	}
}

func BenchmarkWrite(b *testing.B) {
	var w Buf
	p := []byte("abc")
	for i := 0; i < b.N; i++ {
		sinkI, _ = w.Write(p)
	}
}

func BenchmarkLocked(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkI = Locked(i)
	}
}
`,
}

// offPathBeyondFloor bounds the instructions a defer-free probed function's
// off path executes beyond the floor's (monitor.floor: true: the probe's load
// and branch and a cold call of an empty function, with the frame and stack
// check any call makes a function pay): the nil Call, its test at the single
// return, and what holding it costs the function's own code in registers.
const offPathBeyondFloor = 12

// TestOffPathInstructions counts the instructions one call executes, plain,
// built with the floor, and instrumented with the probe off, under valgrind's
// callgrind (exact counts, the same on any amd64 machine whatever its load).
// A function without a defer of its own may cost at most offPathBeyondFloor
// instructions more than the floor: no defer bookkeeping, no results moved
// through memory, whatever its number of returns; monitor.panics: all (a
// deferred exit everywhere) is logged beside it. Times are the real-code benchmark's
// (tigris bench --workload realcode). A function with its own defer keeps
// a deferred exit, which is reported, not bounded.
func TestOffPathInstructions(t *testing.T) {
	itest.RequireGo(t)
	valgrind, err := exec.LookPath("valgrind")
	if err == nil {
		_, err = exec.LookPath("callgrind_annotate")
	}
	if err != nil {
		if os.Getenv("TIGRIS_REQUIRE_VALGRIND") != "" {
			t.Fatal("valgrind not found, and TIGRIS_REQUIRE_VALGRIND is set (CI installs Debian's valgrind)")
		}
		t.Skip("valgrind not found: install Debian's valgrind package to count the off path's instructions")
	}
	dir := itest.NewModule(t, offPathFiles)
	hot := filepath.Join(dir, "hot")
	plain, floor, inst, all := filepath.Join(dir, "plain.test"), filepath.Join(dir, "floor.test"), filepath.Join(dir, "inst.test"), filepath.Join(dir, "all.test")
	itest.Go(t, hot, nil, "test", "-c", "-o", plain, ".")
	floorCfg, allCfg := filepath.Join(dir, "floor.yaml"), filepath.Join(dir, "all.yaml")
	itest.WriteFile(t, floorCfg, strings.Replace(offPathFiles["tigris.yaml"], "monitor:\n", "monitor:\n  floor: true\n", 1))
	itest.WriteFile(t, allCfg, strings.Replace(offPathFiles["tigris.yaml"], "monitor:\n", "monitor:\n  panics: all\n", 1))
	for _, b := range []struct{ out, cfg string }{{floor, floorCfg}, {inst, ""}, {all, allCfg}} {
		args := []string{"go", "test", "-c", "-o", b.out, "."}
		if b.cfg != "" {
			args = append([]string{"--config", b.cfg}, args...)
		}
		if out, code := itest.Run(t, hot, nil, itest.TigrisBin, args...); code != 0 {
			t.Fatalf("tigris %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	for _, bench := range []string{"Number", "Sum", "Kind", "Add", "Max", "Write", "Locked"} {
		p, f, i, a := perCall(t, valgrind, plain, bench), perCall(t, valgrind, floor, bench), perCall(t, valgrind, inst, bench), perCall(t, valgrind, all, bench)
		t.Logf("%-7s plain %5.1f instructions a call; floor +%.1f, probe off +%.1f, deferred exit (panics: all) +%.1f", bench, p, f-p, i-p, a-p)
		if bench != "Locked" && i-f > offPathBeyondFloor {
			t.Errorf("%s: a call with its probe off executes %.1f instructions more than plain, the floor %.1f; at most %d more than the floor", bench, i-p, f-p, offPathBeyondFloor)
		}
	}
}

var annotated = regexp.MustCompile(`^\s*([\d,]+) \([^)]*\)\s+\S*?:(\S+?)(?:'\d+)?(?:\s+\[.*\])?$`)

// perCall is the number of instructions one call of the function hot.<bench>
// executes itself (callees not counted; inlined code, the probe's among it,
// counted), from a run of Benchmark<bench> under callgrind: exact, and the
// same on any amd64 machine whatever its load.
func perCall(t *testing.T, valgrind, bin, bench string) float64 {
	t.Helper()
	const n = 20000
	out := filepath.Join(t.TempDir(), "callgrind.out")
	cmd := exec.Command(valgrind, "--tool=callgrind", "--callgrind-out-file="+out, bin,
		"-test.run=^$", "-test.bench=^Benchmark"+bench+"$", fmt.Sprintf("-test.benchtime=%dx", n), "-test.cpu=1")
	// Callgrind cannot follow Go's preemption signals.
	cmd.Env = itest.Env("GODEBUG=asyncpreemptoff=1", "TIGRIS_MODE=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("callgrind %s -test.bench %s: %v\n%s", filepath.Base(bin), bench, err, b)
	}
	ann, err := exec.Command("callgrind_annotate", "--auto=no", "--threshold=100", out).Output()
	if err != nil {
		t.Fatalf("callgrind_annotate: %v", err)
	}
	name := "example.com/itest/hot." + bench
	var self int64
	for _, line := range strings.Split(string(ann), "\n") {
		m := annotated.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if fn := m[2]; fn == name || strings.HasPrefix(fn, name+"[") || strings.HasSuffix(fn, "."+bench) && strings.HasPrefix(fn, "example.com/itest/hot.(") {
			v, _ := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
			self += v
		}
	}
	if self == 0 {
		t.Fatalf("callgrind found no instructions of %s in %s:\n%s", name, filepath.Base(bin), ann)
	}
	return float64(self) / (n + 1) // testing runs the loop once with b.N = 1 first
}
