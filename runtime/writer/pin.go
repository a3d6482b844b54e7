package writer

import _ "unsafe" // for go:linkname

// The runtime marks these "hall of shame" functions as linkname targets that it keeps
// (go.dev/issue/67401); sync.Pool uses the same pair. A pinned goroutine cannot be
// preempted, so it has its P (and that P's queue) to itself until procUnpin. Nothing
// between procPin and procUnpin may block, allocate or call into the scheduler.

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

//go:linkname nanotime runtime.nanotime
func nanotime() int64
