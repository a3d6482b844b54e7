//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package live

import "time"

// cpuTime is the process's CPU time so far, as the runtime estimates it.
func cpuTime() time.Duration { return metricsCPUTime() }
