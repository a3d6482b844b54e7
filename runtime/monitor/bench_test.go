package monitor

import (
	"flag"
	"sort"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The MooBench portions per call, as go test benchmarks. Each benchmark reports
// its cost as a ratio to two monotonic clock reads measured in the same process
// (BenchmarkClockPair), the yardstick of DESIGN.md's targets.

//go:noinline
func plain(x int) int { return x + 1 }

//go:noinline
func probed(p *Probe, x int) int {
	if p.On() {
		c := Start(p)
		defer c.Exit(nil)
	}
	return x + 1
}

var sinkInt int

// moo is MooBench's monitored method as tigris instruments it: it recurses
// depth-1 times, and its int64 result is the size its exit reports
// (ExitInt), as for the real benchmark (examples/moobench).
//
//go:noinline
func moo(p *Probe, depth int) (r int64) {
	if p.On() {
		c := Start(p)
		defer ExitInt(&c, nil, &r)
	}
	if depth > 1 {
		return moo(p, depth-1)
	}
	return int64(depth)
}

// plainMoo is moo without a probe.
//
//go:noinline
func plainMoo(depth int) int64 {
	if depth > 1 {
		return plainMoo(depth - 1)
	}
	return int64(depth)
}

// mooDepth is MooBench's recursion depth: monitored calls per top-level call.
const mooDepth = 10

// yardstickCalls is how often the yardsticks run inside a benchmark: nested
// testing.Benchmark calls would deadlock on the testing package's benchmark lock.
const yardstickCalls = 1 << 21

// clockPairNs is the cost of two monotonic clock reads.
func clockPairNs() float64 {
	var t int64
	start := nanotime()
	for i := 0; i < yardstickCalls; i++ {
		t += nanotime() - nanotime()
	}
	sinkInt = int(t)
	return float64(nanotime()-start) / yardstickCalls
}

// plainNs is the cost of a call of the unprobed function.
func plainNs() float64 {
	start := nanotime()
	for i := 0; i < yardstickCalls; i++ {
		sinkInt = plain(i)
	}
	return float64(nanotime()-start) / yardstickCalls
}

func BenchmarkClockPair(b *testing.B) {
	var t int64
	for i := 0; i < b.N; i++ {
		t += nanotime() - nanotime()
	}
	sinkInt = int(t)
}

func BenchmarkBaseline(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkInt = plain(i)
	}
}

func benchMode(b *testing.B, mode string, s writer.Sink) {
	ps := newProbes(b, "bench.example/"+mode, 1)
	if _, err := AddRule(Rule{Pattern: "execution(* bench.example/" + mode + ".*(..))", Mode: Mode(mode)}); err != nil {
		b.Fatal(err)
	}
	defer SetRules(nil)
	prev := SetSink(s)
	defer SetSink(prev)
	clock, base := clockPairNs(), plainNs()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkInt = probed(&ps[0], i)
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	over := per - base
	b.ReportMetric(over, "ns-over-plain")
	b.ReportMetric(over/clock, "x-clockpair")
}

// BenchmarkOff is portion I: the probe compiled in, switched off.
func BenchmarkOff(b *testing.B) { benchMode(b, "off", &writer.Null{}) }

// BenchmarkCoarse is portion C for coarse statistics.
func BenchmarkCoarse(b *testing.B) { benchMode(b, "coarse", &writer.Null{}) }

// BenchmarkFineNull is a fine record built and discarded (C of the fine path).
func BenchmarkFineNull(b *testing.B) { benchMode(b, "fine", &writer.Null{}) }

// BenchmarkFineAsync is a fine record through the default asynchronous
// writer into a file (C+W of the fine path, as the program pays it).
func BenchmarkFineAsync(b *testing.B) {
	async, err := writer.NewAsync(writer.Options{Path: b.TempDir() + "/fine.tgr", OnFull: writer.Block})
	if err != nil {
		b.Fatal(err)
	}
	defer async.Close()
	benchMode(b, "fine", async)
}

// BenchmarkPaths measures every probe path against the clock pair in one
// loop: rounds of 1,000 calls of each, interleaved (moo-*: MooBench's shape,
// 100 top-level calls of depth 10, over the unprobed recursion), so that a busy machine
// slows all of them alike; it reports the median round's cost per call over a
// plain call and its ratio to the median clock pair. b.N is the number of
// rounds.
func BenchmarkPaths(b *testing.B) {
	off := newProbes(b, "bench.example/poff", 1)
	coarse := newProbes(b, "bench.example/pcoarse", 1)
	fine := newProbes(b, "bench.example/pfine", 1)
	for _, r := range []Rule{
		{Pattern: "execution(* bench.example/poff.*(..))", Mode: "off"},
		{Pattern: "execution(* bench.example/pcoarse.*(..))", Mode: "coarse"},
		{Pattern: "execution(* bench.example/pfine.*(..))", Mode: "fine"},
	} {
		if _, err := AddRule(r); err != nil {
			b.Fatal(err)
		}
	}
	defer SetRules(nil)
	async, err := writer.NewAsync(writer.Options{Path: b.TempDir() + "/paths.tgr", OnFull: writer.Block})
	if err != nil {
		b.Fatal(err)
	}
	defer async.Close()
	null := &writer.Null{}
	prev := SetSink(null)
	defer SetSink(prev)
	const per = 1000
	names := []string{"clockpair", "plain", "off", "coarse", "fine-null", "fine-async", "moo-plain", "moo-coarse", "moo-fine-async"}
	costs := make([][]float64, len(names))
	var t int64
	run := func(i int, f func()) {
		t0 := nanotime()
		f()
		costs[i] = append(costs[i], float64(nanotime()-t0)/per)
	}
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		run(0, func() {
			for i := 0; i < per; i++ {
				t += nanotime() - nanotime()
			}
		})
		run(1, func() {
			for i := 0; i < per; i++ {
				sinkInt = plain(i)
			}
		})
		run(2, func() {
			for i := 0; i < per; i++ {
				sinkInt = probed(&off[0], i)
			}
		})
		run(3, func() {
			for i := 0; i < per; i++ {
				sinkInt = probed(&coarse[0], i)
			}
		})
		SetSink(null)
		run(4, func() {
			for i := 0; i < per; i++ {
				sinkInt = probed(&fine[0], i)
			}
		})
		SetSink(async)
		run(5, func() {
			for i := 0; i < per; i++ {
				sinkInt = probed(&fine[0], i)
			}
		})
		run(6, func() {
			for i := 0; i < per/mooDepth; i++ {
				sinkInt = int(plainMoo(mooDepth))
			}
		})
		run(7, func() {
			for i := 0; i < per/mooDepth; i++ {
				sinkInt = int(moo(&coarse[0], mooDepth))
			}
		})
		run(8, func() {
			for i := 0; i < per/mooDepth; i++ {
				sinkInt = int(moo(&fine[0], mooDepth))
			}
		})
	}
	sinkInt += int(t)
	med := make([]float64, len(names))
	for i := range names {
		med[i] = quantileOf(costs[i], benchQuantile)
	}
	b.ReportMetric(med[0], "clockpair-ns")
	for i := 2; i < len(names); i++ {
		base := med[1]
		if strings.HasPrefix(names[i], "moo-") {
			if i == 6 {
				continue
			}
			base = med[6]
		}
		b.ReportMetric(med[i]-base, names[i]+"-ns")
		b.ReportMetric((med[i]-base)/med[0], names[i]+"-xcp")
	}
}

// benchQuantile is the quantile of the rounds BenchmarkPaths reports: the
// median by default; -paths.q 0.1 shows a less disturbed figure on a busy
// machine.
var benchQuantile = 0.5

func init() {
	flag.Float64Var(&benchQuantile, "paths.q", 0.5, "quantile of the rounds BenchmarkPaths reports")
}

func quantileOf(xs []float64, q float64) float64 {
	c := append([]float64(nil), xs...)
	sort.Float64s(c)
	if len(c) == 0 {
		return 0
	}
	return c[int(q*float64(len(c)-1))]
}

// BenchmarkTapPaths is what a query's tap adds to a coarse call, in rounds of
// 1,000 calls interleaved like BenchmarkPaths: a coarse probe alone, with a
// tap whose pushed-down bound rejects the call (what a query watching for
// slow calls costs on every fast one), and with a tap that takes every call
// (drained after each round). It reports the median round's cost per call
// over the coarse call, and the coarse call over a plain call.
func BenchmarkTapPaths(b *testing.B) {
	ps := newProbes(b, "bench.example/tap", 3)
	if _, err := AddRule(Rule{Pattern: "within(bench.example/tap)", Mode: "coarse"}); err != nil {
		b.Fatal(err)
	}
	defer SetRules(nil)
	reject, err := Acquire(map[uint32]TapNeed{ps[1].id: {MinNs: int64(1e9)}}, 1024, true)
	if err != nil {
		b.Fatal(err)
	}
	defer reject.Release()
	take, err := Acquire(map[uint32]TapNeed{ps[2].id: {}}, 1024, true)
	if err != nil {
		b.Fatal(err)
	}
	defer take.Release()
	const per = 1000
	costs := make([][]float64, 4)
	run := func(i int, p *Probe) {
		t0 := nanotime()
		for j := 0; j < per; j++ {
			if p == nil {
				sinkInt = plain(j)
			} else {
				sinkInt = probed(p, j)
			}
		}
		costs[i] = append(costs[i], float64(nanotime()-t0)/per)
	}
	var buf []CallTuple
	b.ReportAllocs()
	for n := 0; n < b.N; n++ {
		run(0, nil)
		run(1, &ps[0])
		run(2, &ps[1])
		run(3, &ps[2])
		buf = take.Drain(buf[:0], 0)
	}
	med := make([]float64, len(costs))
	for i := range costs {
		med[i] = quantileOf(costs[i], benchQuantile)
	}
	b.ReportMetric(med[1]-med[0], "coarse-ns")
	b.ReportMetric(med[2]-med[1], "tap-rejects-ns")
	b.ReportMetric(med[3]-med[1], "tap-takes-ns")
}
