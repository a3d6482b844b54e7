package monitor

import (
	_ "unsafe" // for go:linkname

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The probes' clock is writer.Ticks: the calibrated time-stamp counter where
// the writer package found one, else runtime.nanotime (writer/clock.go).
// Call.t0, record times and the coarse statistics' durations are in its
// ticks; the writer converts records to nanoseconds, and stripes.total
// converts the statistics. enter and exit read it with the branch below
// written out: a function with two calls is too costly for the inliner, and
// a call per read would cost a few ns of the few dozen a probe costs.
//
//	if useTSC { t = writer.TSC() } else { t = nanotime() }
var useTSC = writer.TickSource() == writer.ClockTSC

// ticksNow reads the probes' clock, for the paths where a call costs
// nothing that matters.
func ticksNow() int64 {
	if useTSC {
		return writer.TSC()
	}
	return nanotime()
}

// nanotime is the runtime's monotonic clock, the cheapest clock a Go program can
// read (time.Now also reads the wall clock). Records carry its values; the stream
// header maps them to wall-clock time.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// procPin pins the goroutine to its P (no preemption) and returns the P's id;
// it lets coarse statistics use per-P stripes without locks, as sync.Pool does.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// cheaprand is the runtime's per-M random generator: no lock, no allocation.
//
//go:linkname cheaprand runtime.cheaprand
func cheaprand() uint32
