//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package tracequery

import "time"

// cpuTime is, where the process's CPU time cannot be read, the wall time
// since the process started: an upper bound of one goroutine's CPU time.
func cpuTime() time.Duration { return wallTime() }
