//go:build !exectrace

package main

import "time"

// startPeer starts what a peer build adds around the benchmark: nothing here
// (exectrace.go starts the execution tracer).
func startPeer() (stop func() error, err error) { return func() error { return nil }, nil }

// monitoredCall is the benchmark's view of the monitored application: one
// top-level call of depth monitored calls.
func monitoredCall(methodTime time.Duration, depth int) int64 {
	return monitoredMethod(methodTime, depth)
}

// monitoredMethod is MooBench's MonitoredClassSimple.monitoredMethod (thesis,
// Listing 8.3): it recurses recDepth-1 times and busy-waits methodTime once at
// the deepest level on the monotonic clock. The return value is the last clock
// reading, so the busy wait cannot be optimised away. tigris.yaml selects this
// function, and only this one, for instrumentation.
//
//go:noinline
func monitoredMethod(methodTime time.Duration, recDepth int) int64 {
	if recDepth > 1 {
		return monitoredMethod(methodTime, recDepth-1)
	}
	exit := nanotime() + int64(methodTime)
	var now int64
	for {
		now = nanotime()
		if now >= exit {
			return now
		}
	}
}
