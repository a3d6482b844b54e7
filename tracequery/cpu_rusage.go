//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tracequery

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return wallTime()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
