package integration

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// loadFiles is a program, and a package with tests, that make fine records as
// fast as goroutines can: more producers than CPUs, each a tight loop of
// recursive calls (MooBench's stress point). It shares ShopConfig's pointcuts
// (and so the compiler fingerprint of the other tests).
var loadFiles = map[string]string{
	"tigris.yaml": itest.ShopConfig,
	"load/load.go": `package load

import "sync"

// Depth recurses d levels: d monitored calls.
func Depth(d int) int {
	if d <= 1 {
		return 1
	}
	return Depth(d-1) + 1
}

// Run makes calls top-level calls of Depth(depth) on each of g goroutines.
func Run(g, calls, depth int) int {
	var wg sync.WaitGroup
	sums := make([]int, g)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for c := 0; c < calls; c++ {
				sums[i] += Depth(depth)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	for _, s := range sums {
		n += s
	}
	return n
}
`,
	"load/load_test.go": `package load

import "testing"

func TestRun(t *testing.T) {
	for _, g := range []int{1, 2, 4} {
		g := g
		t.Run("", func(t *testing.T) {
			t.Parallel()
			if n := Run(g, 20000, 10); n != g*20000*10 {
				t.Fatalf("Run = %d", n)
			}
		})
	}
}
`,
	"main.go": `package main

import (
	"fmt"
	"os"
	"strconv"

	"example.com/itest/load"
)

func main() {
	g, _ := strconv.Atoi(os.Args[1])
	calls, _ := strconv.Atoi(os.Args[2])
	fmt.Println(load.Run(g, calls, 10))
}
`,
}

// traceTotals sums the records of Depth, all records (links included) and
// the lost records of the trace files matching pattern.
func traceTotals(t *testing.T, pattern string) (depth, records, lost uint64, files int) {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		r, err := writer.Open(p)
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if it.Kind == writer.KindRecord {
				if def := r.Probe(it.Record.Probe); def != nil && def.Name == "Depth" {
					depth++
				}
			}
		}
		st := r.Stats()
		r.Close()
		if st.Gaps != 0 {
			t.Errorf("%s: %d damaged stretches", p, st.Gaps)
		}
		// A link item (a goroutine started inside a trace) is counted like
		// a record by the writer and by loss records.
		records += uint64(st.Records + st.Links)
		lost += st.Lost
	}
	return depth, records, lost, len(paths)
}

var lossLine = regexp.MustCompile(`tigris: (\d+) of (\d+) fine records lost`)

// TestDefaultsLoseNothing: with the default writer settings, fine records made
// by more goroutines than there are CPUs all reach the trace, in a program
// and in a package's tests run through tigris; with writer.on-full: drop and
// a tiny queue, every record is written or counted as lost, in the file and
// in the line the program prints at exit.
func TestDefaultsLoseNothing(t *testing.T) {
	dir := itest.NewModule(t, loadFiles)
	exe := filepath.Join(dir, "loadprog"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", exe, ".")
	const g, calls = 8, 50_000
	want := uint64(g * calls * 10)

	out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_OUT=" + filepath.Join(dir, "default.tgr")}, exe, strconv.Itoa(g), strconv.Itoa(calls))
	if code != 0 || strings.TrimSpace(out) != strconv.FormatUint(want, 10) {
		t.Fatalf("default run: exit status %d\n%s", code, out)
	}
	depth, made, lost, _ := traceTotals(t, filepath.Join(dir, "default.tgr"))
	if depth != want || lost != 0 {
		t.Errorf("default settings: %d of %d records of Depth written, %d records lost", depth, want, lost)
	}

	// The drop policy counts exactly what it drops.
	out, code = itest.Run(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_ON_FULL=drop", "TIGRIS_QUEUE=64",
		"TIGRIS_OUT=" + filepath.Join(dir, "drop.tgr")}, exe, strconv.Itoa(g), strconv.Itoa(calls))
	if code != 0 {
		t.Fatalf("drop run: exit status %d\n%s", code, out)
	}
	// The same calls as the default run (Depth's and the few around them).
	_, recs, lost, _ := traceTotals(t, filepath.Join(dir, "drop.tgr"))
	if recs+lost != made {
		t.Errorf("on-full drop: %d written + %d lost != %d made", recs, lost, made)
	}
	if m := lossLine.FindStringSubmatch(out); lost > 0 && (m == nil || m[1] != strconv.FormatUint(lost, 10) || m[2] != strconv.FormatUint(made, 10)) {
		t.Errorf("on-full drop lost %d of %d; the exit line says %q:\n%s", lost, made, m, out)
	} else if lost == 0 && m != nil {
		t.Errorf("nothing lost, yet the program said %q", m[0])
	}
	t.Logf("on-full drop, queue 64: %d of %d records lost", lost, made)
	// tigris stats reads the loss records and says so in one line.
	if lost > 0 {
		out := itest.Tigris(t, dir, nil, "stats", filepath.Join(dir, "drop.tgr"))
		if want := "stats: warning: the monitored program lost " + strconv.FormatUint(lost, 10) + " records"; !strings.Contains(out, want) {
			t.Errorf("tigris stats does not say %q:\n%s", want, out)
		}
	}

	// The package's tests, through tigris, with the defaults.
	traces := filepath.Join(dir, "tests")
	if err := os.MkdirAll(traces, 0o777); err != nil {
		t.Fatal(err)
	}
	out = itest.Tigris(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_OUT=" + filepath.Join(traces, "{binary}-{pid}.tgr")},
		"go", "test", "-count=1", "./load")
	if lossLine.MatchString(out) {
		t.Errorf("the tests lost records:\n%s", out)
	}
	depth, _, lost, files := traceTotals(t, filepath.Join(traces, "*.tgr"))
	if want := uint64((1 + 2 + 4) * 20_000 * 10); depth != want || lost != 0 || files != 1 {
		t.Errorf("go test: %d of %d records of Depth in %d file(s), %d records lost", depth, want, files, lost)
	}
}
