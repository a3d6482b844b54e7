package live

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// A sampler reads one runtime stream. Streams that report what happened in
// an interval (cpu, gc, heap's allocated) keep the previous reading; the
// first reading covers the time since the sampler started.
type sampler struct {
	stream  *query.StreamDef
	prevAt  time.Time
	prevCPU time.Duration
	prevGC  metricsPrev
	samples []metrics.Sample
}

type metricsPrev struct {
	allocs uint64
	cycles uint64
	pauses []uint64
}

// The runtime/metrics names each stream reads; a name the running Go does not
// have reads as zero.
const (
	mHeapLive    = "/memory/classes/heap/objects:bytes"
	mHeapAllocs  = "/gc/heap/allocs:bytes"
	mHeapObjects = "/gc/heap/objects:objects"
	mHeapGoal    = "/gc/heap/goal:bytes"
	mGoroutines  = "/sched/goroutines:goroutines"
	mGCCycles    = "/gc/cycles/total:gc-cycles"
	mGCPauses    = "/sched/pauses/total/gc:seconds" // Go 1.22
	mGCPausesOld = "/gc/pauses:seconds"
)

var known = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, d := range metrics.All() {
		m[d.Name] = true
	}
	return m
})

func newSampler(s *query.StreamDef) *sampler {
	sm := &sampler{stream: s}
	switch s {
	case query.Heap:
		sm.samples = sampleSet(mHeapLive, mHeapAllocs, mHeapObjects, mHeapGoal)
	case query.Goroutines:
		sm.samples = sampleSet(mGoroutines)
	case query.GC:
		pauses := mGCPauses
		if !known()[pauses] {
			pauses = mGCPausesOld
		}
		sm.samples = sampleSet(mGCCycles, pauses)
	}
	sm.read(time.Now()) // the baseline of interval streams
	return sm
}

func sampleSet(names ...string) []metrics.Sample {
	out := make([]metrics.Sample, len(names))
	for i, n := range names {
		if known()[n] {
			out[i].Name = n
		}
	}
	return out
}

func u64(s metrics.Sample) uint64 {
	if s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

// read returns the stream's tuple at now, in the stream's column order.
func (s *sampler) read(now time.Time) []query.Value {
	vals := []query.Value{query.TimeValue(now.UnixNano())}
	if len(s.samples) > 0 {
		metrics.Read(s.samples)
	}
	switch s.stream {
	case query.CPU:
		cpu := engine.CPUTime()
		wall := now.Sub(s.prevAt)
		procs := runtime.GOMAXPROCS(0)
		busy := 0.0
		used := cpu - s.prevCPU
		if !s.prevAt.IsZero() && wall > 0 {
			busy = float64(used) / (float64(wall) * float64(procs))
		}
		s.prevAt, s.prevCPU = now, cpu
		vals = append(vals, query.FloatValue(busy), query.FloatValue(used.Seconds()), query.IntValue(int64(procs)))
	case query.Heap:
		allocs := u64(s.samples[1])
		vals = append(vals, query.IntValue(int64(u64(s.samples[0]))), query.IntValue(int64(allocs-s.prevGC.allocs)),
			query.IntValue(int64(u64(s.samples[2]))), query.IntValue(int64(u64(s.samples[3]))))
		s.prevGC.allocs = allocs
	case query.Goroutines:
		vals = append(vals, query.IntValue(int64(u64(s.samples[0]))))
	case query.GC:
		cycles := u64(s.samples[0])
		total, longest := s.pauses(s.samples[1])
		vals = append(vals, query.IntValue(int64(cycles-s.prevGC.cycles)), query.DurationValue(total), query.DurationValue(longest))
		s.prevGC.cycles = cycles
	}
	return vals
}

// pauses sums the pauses the histogram gained since the last reading, each
// at its bucket's upper bound (the lower one for the open last bucket), and
// the longest.
func (s *sampler) pauses(sample metrics.Sample) (total, longest time.Duration) {
	if sample.Value.Kind() != metrics.KindFloat64Histogram {
		return 0, 0
	}
	h := sample.Value.Float64Histogram()
	prev := s.prevGC.pauses
	if len(prev) != len(h.Counts) {
		prev = make([]uint64, len(h.Counts))
	}
	for i, c := range h.Counts {
		d := c - prev[i]
		if d == 0 {
			continue
		}
		bound := h.Buckets[i+1]
		if math.IsInf(bound, 1) {
			bound = h.Buckets[i]
		}
		p := time.Duration(bound * float64(time.Second))
		total += time.Duration(d) * p
		if p > longest {
			longest = p
		}
	}
	s.prevGC.pauses = append(prev[:0:0], h.Counts...)
	return total, longest
}
