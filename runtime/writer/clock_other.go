//go:build !amd64

package writer

// haveTSC: no time-stamp counter is read on this architecture; Ticks is
// runtime.nanotime.
const haveTSC = false

func rdtsc() int64       { return 0 }
func invariantTSC() bool { return false }
