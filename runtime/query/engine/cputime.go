package engine

import (
	"runtime/metrics"
	"time"
)

// CPUTime is the process's user and system CPU time so far, what a query's
// cost is measured in (the live cpu stream, tigris query --max-cpu): from
// getrusage, and where a system has none, the Go runtime's estimate
// (runtime/metrics; 0 when it has none either).
func CPUTime() time.Duration { return processCPUTime() }

// runtimeCPUTime is the Go runtime's estimate of the process's CPU time.
func runtimeCPUTime() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}
