package tracequery

import (
	"fmt"
	"time"

	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// DefaultMaxCPU is the CPU time tigris query lets one query take
// (Options.MaxCPU): a minute, where the queries of the examples take well
// under a second on traces of millions of records.
const DefaultMaxCPU = time.Minute

// CPUError is the error of a query stopped by Options.MaxCPU.
type CPUError struct {
	Used, Max time.Duration
}

func (e *CPUError) Error() string {
	return fmt.Sprintf("query stopped: it used %v of CPU, more than the %v that --max-cpu allows (--max-cpu 0 lifts the bound)", e.Used.Round(time.Millisecond), e.Max)
}

// cpuCheckEvery is how often, in wall time, a query reads the process's CPU
// time: a query stops at most this much CPU time past its bound.
const cpuCheckEvery = 20 * time.Millisecond

// cpuBound stops a query whose process has used more than max of CPU time
// since it started (max 0: no bound).
type cpuBound struct {
	max   time.Duration
	start time.Duration
	next  time.Time
	err   *CPUError
}

func newCPUBound(max time.Duration) *cpuBound {
	b := &cpuBound{max: max}
	if max > 0 {
		b.start = engine.CPUTime()
	}
	return b
}

// over says whether the query is past its bound, reading the CPU time at
// most every cpuCheckEvery.
func (b *cpuBound) over() bool {
	switch {
	case b.max <= 0:
		return false
	case b.err != nil:
		return true
	}
	now := time.Now()
	if now.Before(b.next) {
		return false
	}
	b.next = now.Add(cpuCheckEvery)
	if used := engine.CPUTime() - b.start; used > b.max {
		b.err = &CPUError{Used: used, Max: b.max}
		return true
	}
	return false
}
