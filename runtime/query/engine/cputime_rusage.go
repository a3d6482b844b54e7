//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package engine

import (
	"syscall"
	"time"
)

func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return runtimeCPUTime()
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
