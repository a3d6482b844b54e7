package monitor

import (
	"runtime"
	"sync"
	"unsafe"
)

// This file is the portable goroutine-local slot, used when the monitor is built
// without tigris (its own unit tests, a plain `go build`). In an instrumented build
// the rewriter replaces it with slot_linked.go, whose accessors live in a patched
// package runtime: one field in the g struct, reached in ~1 ns. The portable
// version finds the goroutine id by parsing runtime.Stack (~1 µs) and cannot tell
// a panicking exit from a normal one.

// slotLinked reports whether the fast runtime accessors are in use.
const slotLinked = false

var portableSlots sync.Map // goroutine id → *unsafe.Pointer

// slot returns the current goroutine's slot and id.
func slot() (*unsafe.Pointer, uint64) {
	id := goid()
	if v, ok := portableSlots.Load(id); ok {
		return v.(*unsafe.Pointer), id
	}
	p := new(unsafe.Pointer)
	portableSlots.Store(id, p)
	return p, id
}

// panicMark identifies the goroutine's innermost in-flight panic (0 when none).
func panicMark() uintptr { return 0 }

func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	// "goroutine 123 [running]:..."
	const prefix = len("goroutine ")
	var id uint64
	for i := prefix; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + uint64(b[i]-'0')
	}
	return id
}
