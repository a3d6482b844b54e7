//go:build unix

package compat

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is the peak resident set size of the process and its waited-for
// descendants (Linux merges the children's maximum into a reaped process's
// rusage), in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}
