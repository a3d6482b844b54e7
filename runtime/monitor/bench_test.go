package monitor

import (
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
	if c := Enter(p); c.On() {
		defer c.Exit(nil)
	}
	return x + 1
}

var sinkInt int

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
