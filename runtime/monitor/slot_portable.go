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

// portableSlots maps goroutine ids to slots. A plain map under a lock rather
// than a sync.Map: a sync.Map key is an interface, and boxing the id would
// allocate on every lookup.
var portableSlots struct {
	sync.RWMutex
	m map[uint64]*unsafe.Pointer
}

// slot returns the current goroutine's slot and id.
func slot() (*unsafe.Pointer, uint64) {
	id := goid()
	portableSlots.RLock()
	p := portableSlots.m[id]
	portableSlots.RUnlock()
	if p != nil {
		return p, id
	}
	portableSlots.Lock()
	defer portableSlots.Unlock()
	if p = portableSlots.m[id]; p == nil {
		if portableSlots.m == nil {
			portableSlots.m = map[uint64]*unsafe.Pointer{}
		}
		p = new(unsafe.Pointer)
		portableSlots.m[id] = p
	}
	return p, id
}

// panicMark identifies the goroutine's innermost in-flight panic (0 when none).
func panicMark() uintptr { return 0 }

// stackBufs holds goid's buffers: runtime.Stack's buffer escapes, so a local
// array would be allocated on every call.
var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

func goid() uint64 {
	buf := stackBufs.Get().(*[64]byte)
	defer stackBufs.Put(buf)
	b := buf[:runtime.Stack(buf[:], false)]
	// "goroutine 123 [running]:..."
	const prefix = len("goroutine ")
	var id uint64
	for i := prefix; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + uint64(b[i]-'0')
	}
	return id
}
