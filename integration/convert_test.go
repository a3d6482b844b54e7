package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// convertFiles is a small program whose package is traced in fine mode: main
// calls calc.Work 200 times, Work calls Square (cheap) and Slow (a busy loop).
var convertFiles = map[string]string{
	// itest.ShopConfig's pointcuts with other run-time settings: the same compiler
	// output, so the standard library is not compiled again for this test.
	"tigris.yaml": strings.Replace(itest.ShopConfig, "mode: coarse", "mode: fine", 1) + "writer:\n  mode: sync\n",
	"main.go": `package main

import (
	"fmt"

	"example.com/itest/calc"
)

func main() {
	total := 0
	for i := range 200 {
		total += calc.Work(i)
	}
	fmt.Println(total)
}
`,
	"calc/calc.go": `package calc

// Work is Square plus Slow.
func Work(n int) int { return Square(n) + Slow(n) }

// Square is cheap.
func Square(n int) int { return n * n }

// Slow spins for a while.
func Slow(n int) int {
	s := 0
	for i := range 50_000 {
		s += i % (n + 1)
	}
	return s
}
`,
}

// TestConvertRealTraceToPprof builds the program with probes, runs it so it writes
// its fine-mode trace to the default tigris-out/{binary}-{pid}.tgr, converts the
// trace with tigris convert --to pprof and reads the profile with go tool pprof.
func TestConvertRealTraceToPprof(t *testing.T) {
	dir := itest.NewModule(t, convertFiles)
	bin := filepath.Join(dir, "calcapp"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")
	itest.RunProgram(t, bin)

	traces, _ := filepath.Glob(filepath.Join(dir, "tigris-out", "calcapp-*.tgr"))
	if len(traces) != 1 {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("trace files %q; want one in tigris-out/ (dir has %v)", traces, entries)
	}
	trace := traces[0]
	out := itest.Tigris(t, dir, nil, "convert", "--to", "pprof", trace)
	// main.main and 200 × Work, Square and Slow, all in main's one call tree.
	if !strings.Contains(out, ": 601 records in 1 call tree(s), 0 lost") {
		t.Errorf("convert said:\n%s", out)
	}
	prof := strings.TrimSuffix(trace, ".tgr") + ".pb.gz"
	if !itest.FileExists(prof) {
		t.Fatalf("no profile at %s; convert said:\n%s", prof, out)
	}

	// -nodefraction=0: Square's share is below pprof's default cut.
	top, code := itest.Run(t, dir, nil, itest.GoExe, "tool", "pprof", "-top", "-nodefraction=0", prof)
	if code != 0 {
		t.Fatalf("go tool pprof -top: exit status %d\n%s", code, top)
	}
	// Functions appear under their Go symbol names, as in CPU profiles.
	for _, fn := range []string{
		"example.com/itest/calc.Slow\n",
		"example.com/itest/calc.Work\n",
		"example.com/itest/calc.Square\n",
		"example.com/itest.main\n",
	} {
		if !strings.Contains(top, fn) {
			t.Errorf("pprof -top does not show %s:\n%s", fn, top)
		}
	}
	// The default sample type is exclusive time, and Slow has most of it.
	if !strings.Contains(top, "Type: exclusive") || !strings.Contains(firstRow(top), "calc.Slow") {
		t.Errorf("pprof -top should rank calc.Slow first by exclusive time:\n%s", top)
	}

	// The same trace, read and summarized by the CLI.
	stats := itest.Tigris(t, dir, nil, "stats", "--sort", "calls", trace)
	for _, fn := range []string{"calc.Slow", "calc.Work", "calc.Square"} {
		if !strings.Contains(stats, fn) {
			t.Errorf("tigris stats misses %s:\n%s", fn, stats)
		}
	}
}

// firstRow returns the first function line of pprof -top output (after the
// "flat  flat%" header).
func firstRow(top string) string {
	_, rest, ok := strings.Cut(top, "cum%\n")
	if !ok {
		return ""
	}
	row, _, _ := strings.Cut(rest, "\n")
	return row
}
