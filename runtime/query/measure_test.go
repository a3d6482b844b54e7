//go:build unix

package query

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var measure = flag.Bool("measure", false, "measure what compiling the longest texts costs (TestLongestCompileCost)")

// longestChain is chain at the longest a query may be.
func longestChain(chain func(int) string) string {
	n := 1000
	for len(chain(2*n)) <= MaxText {
		n *= 2
	}
	for len(chain(n+n/8)) <= MaxText {
		n += n / 8
	}
	return chain(n)
}

// TestLongestCompileCost measures, each in a fresh process as a program
// compiles its first query, the CPU time and the growth of the peak RSS of
// compiling the longest text of each kind (cost_test.go's chains), which
// docs/queries.md quotes:
//
//	go test -run TestLongestCompileCost -measure -v ./runtime/query
//
// It reports; it asserts nothing about time (TestCompileChainsLinear bounds
// what a compile allocates).
func TestLongestCompileCost(t *testing.T) {
	if name := os.Getenv("TIGRIS_MEASURE_CHAIN"); name != "" {
		text := longestChain(chains[name])
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := Compile(text, nil); err != nil {
			t.Fatal(err)
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		runtime.ReadMemStats(&m1)
		cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		fmt.Printf("MEASURED %d %d %d %d\n", len(text), cpu, (after.Maxrss-before.Maxrss)<<10, m1.TotalAlloc-m0.TotalAlloc)
		return
	}
	if !*measure {
		t.Skip("run with -measure")
	}
	for _, name := range sortedChains() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLongestCompileCost$")
		cmd.Env = append(os.Environ(), "TIGRIS_MEASURE_CHAIN="+name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		i := strings.Index(string(out), "MEASURED ")
		if i < 0 {
			t.Fatalf("%s: %s", name, out)
		}
		var size int
		var cpu time.Duration
		var rss, alloc int64
		fmt.Sscan(string(out[i+len("MEASURED "):]), &size, &cpu, &rss, &alloc)
		t.Logf("%-19s %6d bytes: CPU %v, peak RSS +%.0f MB, allocated %.0f MB", name, size, cpu.Round(10*time.Millisecond), float64(rss)/1e6, float64(alloc)/1e6)
	}
}

func sortedChains() []string {
	var names []string
	for name := range chains {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
