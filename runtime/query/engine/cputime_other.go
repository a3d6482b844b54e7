//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package engine

import "time"

func processCPUTime() time.Duration { return runtimeCPUTime() }
