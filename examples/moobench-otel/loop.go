package main

// This file is copied verbatim into examples/moobench-otel: keep the copies equal
// (bench's TestExampleCopiesInSync checks).

import (
	"runtime"
	"slices"
	"sync"
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock, read through the same linkname as
// the tigris monitor (monitor/clock.go) reads it for every probe. Timing the
// benchmark with it makes the measuring cost as small as it can be, identical in
// every variant, and makes the clock-pair yardstick below exactly the two reads
// a probe adds. time.Now would also read the wall clock (a second vDSO call),
// and time.Since(t) reads only nanotime; neither is what the monitor pays.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// sink keeps the monitored call's results alive.
var sink int64

// result is what one benchmark loop measured.
type result struct {
	timings    []int64 // ns per top-level call, goroutine after goroutine
	elapsed    int64   // wall time of the whole loop, ns
	mallocs    uint64  // heap objects the whole process allocated during the loop
	allocBytes uint64  // bytes the whole process allocated during the loop
}

// benchmark runs goroutines benchmark goroutines that each make calls top-level
// calls of call(methodTime, depth) and time every one of them with two nanotime
// reads into their own preallocated array (thesis, Listing 8.4). It returns the
// arrays, goroutine after goroutine in one slice, the wall time of the whole
// loop and what the process allocated meanwhile. The goroutines start together.
//
// The allocation counts come from runtime.ReadMemStats before the start and
// after the last goroutine is done, outside the timed calls: they cover the
// monitored calls, the monitor's background goroutines (the async writer) and
// anything else the process did, so a probe path that allocates shows up as
// about one allocation per monitored call (DESIGN.md: every probe path 0
// allocations).
func benchmark(calls, depth int, methodTime time.Duration, goroutines int, call func(time.Duration, int) int64) result {
	timings := make([]int64, calls*goroutines)
	// Touch every page before starting so page faults do not land in the
	// timings.
	for i := range timings {
		timings[i] = 0
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	sums := make([]int64, goroutines*8) // one cache line each
	for g := 0; g < goroutines; g++ {
		ready.Add(1)
		done.Add(1)
		go func(g int) {
			defer done.Done()
			t := timings[g*calls : (g+1)*calls : (g+1)*calls]
			var s int64
			ready.Done()
			<-start
			for i := range t {
				t0 := nanotime()
				s += call(methodTime, depth)
				t[i] = nanotime() - t0
			}
			sums[g*8] = s
		}(g)
	}
	ready.Wait()
	runtime.GC() // as MooBench's driver does before the warm-up: a steady state sooner
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0 := nanotime()
	close(start)
	done.Wait()
	elapsed := nanotime() - t0
	runtime.ReadMemStats(&m1)
	for g := 0; g < goroutines; g++ {
		sink += sums[g*8]
	}
	return result{
		timings:    timings,
		elapsed:    elapsed,
		mallocs:    m1.Mallocs - m0.Mallocs,
		allocBytes: m1.TotalAlloc - m0.TotalAlloc,
	}
}

// clockPair measures the cost of two monotonic clock reads in this process, the
// yardstick of DESIGN.md's targets, with the loop of monitor's
// BenchmarkClockPair: iters pairs in batches of 1,000, and the median batch's
// cost per pair. Short batches and the median keep preemption (a busy machine)
// out of the figure, as the median of the per-call timings keeps it out of the
// benchmark's.
func clockPair(iters int) (nsPerPair float64, total int64) {
	const per = 1000
	batches := iters / per
	if batches == 0 {
		return 0, 0
	}
	costs := make([]float64, batches)
	var s int64
	for b := range costs {
		t0 := nanotime()
		for i := 0; i < per; i++ {
			s += nanotime() - nanotime()
		}
		costs[b] = float64(nanotime()-t0) / per
	}
	sink += s
	slices.Sort(costs)
	if batches%2 == 1 {
		return costs[batches/2], int64(per * batches)
	}
	return (costs[batches/2-1] + costs[batches/2]) / 2, int64(per * batches)
}
