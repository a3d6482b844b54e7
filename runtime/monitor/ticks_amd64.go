package monitor

import "unsafe"

// ticksAndG reads the time-stamp counter (writer.TSC) and the running
// goroutine's g (getg) in one call (g_amd64.s). The exits call it when the
// probes' clock is the counter.
func ticksAndG() (ticks int64, gp unsafe.Pointer)
