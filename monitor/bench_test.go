package monitor

import (
	"testing"

	"github.com/tigrisgo/tigris/writer"
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

func clockPairNs(b *testing.B) float64 {
	r := testing.Benchmark(func(b *testing.B) {
		var t int64
		for i := 0; i < b.N; i++ {
			t += nanotime() - nanotime()
		}
		sinkInt = int(t)
	})
	return float64(r.T.Nanoseconds()) / float64(r.N)
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
	clock := clockPairNs(b)
	base := testing.Benchmark(func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkInt = plain(i)
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkInt = probed(&ps[0], i)
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	over := per - float64(base.T.Nanoseconds())/float64(base.N)
	b.ReportMetric(over, "ns-over-plain")
	b.ReportMetric(over/clock, "x-clockpair")
}

// BenchmarkOff is portion I: the probe compiled in, switched off.
func BenchmarkOff(b *testing.B) { benchMode(b, "off", &writer.Null{}) }

// BenchmarkCoarse is portion C for coarse statistics.
func BenchmarkCoarse(b *testing.B) { benchMode(b, "coarse", &writer.Null{}) }

// BenchmarkFineNull is a fine record built and discarded (C of the fine path).
func BenchmarkFineNull(b *testing.B) { benchMode(b, "fine", &writer.Null{}) }
