//go:build !amd64

package monitor

import "unsafe"

// ticksAndG is only called where the probes' clock is the time-stamp
// counter, which is amd64 (ticks_amd64.go); elsewhere it reads the portable
// clock.
func ticksAndG() (ticks int64, gp unsafe.Pointer) { return nanotime(), getg() }
