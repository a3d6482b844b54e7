package monitor

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Goroutine-local trace contexts.
//
// Each goroutine that makes a fine call gets a traceCtx. With the calibrated
// layout (glayout.go) the context is found by the address of the goroutine's
// g in an open-addressing table: one getg, one hash, one or two loads, and the
// goroutine id read from g tells a context that belongs to an earlier
// goroutine of the same g (the runtime reuses g structures) from the current
// one. g structures are never freed, so the table holds at most one entry per
// g the program ever had, like the runtime's own list of all gs.
//
// Without the layout the portable slots map goroutine ids, parsed from
// runtime.Stack, to contexts.

// context returns the running goroutine's trace context, creating it on the
// goroutine's first fine call. go:norace: see traceCtx.
//
//go:norace
func context() *traceCtx {
	gp := getg()
	if ctx := knownContext(gp); ctx != nil {
		return ctx
	}
	return newContext(gp)
}

// knownContext is the common case of context, kept small enough to inline
// there: the context of g gp, found in the first slot its hash names, that
// belongs to the running goroutine; nil otherwise. Without the layout the
// table stays empty and it returns nil.
//
//go:norace
func knownContext(gp unsafe.Pointer) *traceCtx {
	t := gslots.t.Load()
	if t == nil {
		return nil
	}
	s := &t.slots[(uintptr(uint64(uintptr(gp))*gslotMul)>>(t.shift&63))&t.mask]
	if s.g.Load() != uintptr(gp) {
		return nil
	}
	ctx := s.ctx.Load()
	if ctx.goid != *(*uint64)(unsafe.Add(gp, glayout.goid)) {
		return nil
	}
	return ctx
}

// newContext is context when knownContext did not find it: a slot further
// along, the goroutine's first fine call on g gp, or no layout.
//
//go:norace
func newContext(gp unsafe.Pointer) *traceCtx {
	if !glayout.ok {
		return portableContext()
	}
	id := *(*uint64)(unsafe.Add(gp, glayout.goid))
	ctx := gslots.find(uintptr(gp))
	if ctx == nil {
		ctx = gslots.add(uintptr(gp))
	}
	if ctx.goid != id {
		// A new goroutine on a reused g (or the first use): only this
		// goroutine touches its context, so no atomics are needed.
		*ctx = traceCtx{goid: id}
	}
	return ctx
}

// panicking reports whether the function whose Call is c is ending because of
// a panic: a panic is unwinding the goroutine, and it started below c's frame
// (the _panic lives in gopanic's frame, deeper on the same stack than the
// function that panicked; a panic that was already unwinding when the function
// was called from a deferred call lives above it). Goexit's unwinding has no
// argument and is no panic. Without the layout it reports false.
//
//go:nocheckptr
func panicking(c *Call) bool { return panickingOn(getg(), c) }

// panickingOn is panicking for the running goroutine's g, gp.
//
//go:nocheckptr
func panickingOn(gp unsafe.Pointer, c *Call) bool {
	if !glayout.ok {
		return false
	}
	p := *(*unsafe.Pointer)(unsafe.Add(gp, glayout.panic))
	if p == nil || uintptr(p) > uintptr(unsafe.Pointer(c)) {
		return false
	}
	return *(*uintptr)(unsafe.Add(p, glayout.argType)) != 0
}

// gslotMul spreads g addresses (which are 8-byte aligned and a size class
// apart) over the table.
const gslotMul = 0x9E3779B97F4A7C15

type gslot struct {
	g   atomic.Uintptr
	ctx atomic.Pointer[traceCtx]
}

type gtable struct {
	slots []gslot
	mask  uintptr
	shift uint
}

// gslots is the g → context table. Lookups take no lock; a goroutine adds
// only its own g, under mu, and the table is copied into a larger one when
// half full (the copy shares the contexts, so a lookup in the old table finds
// the same context).
type gslotTable struct {
	mu sync.Mutex
	t  atomic.Pointer[gtable]
	n  int
}

var gslots gslotTable

func (gs *gslotTable) find(g uintptr) *traceCtx {
	t := gs.t.Load()
	if t == nil {
		return nil
	}
	for i := (uintptr(uint64(g)*gslotMul) >> t.shift) & t.mask; ; i = (i + 1) & t.mask {
		switch s := &t.slots[i]; s.g.Load() {
		case g:
			return s.ctx.Load()
		case 0:
			return nil
		}
	}
}

func (gs *gslotTable) add(g uintptr) *traceCtx {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	t := gs.t.Load()
	if t == nil || 2*(gs.n+1) > len(t.slots) {
		size := 64
		if t != nil {
			size = 2 * len(t.slots)
		}
		nt := newGtable(size)
		if t != nil {
			for i := range t.slots {
				if k := t.slots[i].g.Load(); k != 0 {
					nt.put(k, t.slots[i].ctx.Load())
				}
			}
		}
		gs.t.Store(nt)
		t = nt
	}
	ctx := &traceCtx{}
	t.put(g, ctx)
	gs.n++
	return ctx
}

func newGtable(size int) *gtable {
	shift := uint(64)
	for n := size; n > 1; n >>= 1 {
		shift--
	}
	return &gtable{slots: make([]gslot, size), mask: uintptr(size - 1), shift: shift}
}

// put stores a context for g; the caller holds gslots.mu.
func (t *gtable) put(g uintptr, ctx *traceCtx) {
	i := (uintptr(uint64(g)*gslotMul) >> t.shift) & t.mask
	for t.slots[i].g.Load() != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i].ctx.Store(ctx)
	t.slots[i].g.Store(g)
}

// portableSlots maps goroutine ids to contexts when the layout is unknown. A
// plain map under a lock rather than a sync.Map: a sync.Map key is an
// interface, and boxing the id would allocate on every lookup. Contexts of
// ended goroutines are never removed: without the g there is no way to tell
// that a goroutine ended.
var portableSlots struct {
	sync.RWMutex
	m map[uint64]*traceCtx
}

func portableContext() *traceCtx {
	id := portableGoid()
	portableSlots.RLock()
	ctx := portableSlots.m[id]
	portableSlots.RUnlock()
	if ctx != nil {
		return ctx
	}
	portableSlots.Lock()
	defer portableSlots.Unlock()
	if ctx = portableSlots.m[id]; ctx == nil {
		if portableSlots.m == nil {
			portableSlots.m = map[uint64]*traceCtx{}
		}
		ctx = &traceCtx{goid: id}
		portableSlots.m[id] = ctx
	}
	return ctx
}

// stackBufs holds portableGoid's buffers: runtime.Stack's buffer escapes, so
// a local array would be allocated on every call.
var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

func portableGoid() uint64 {
	buf := stackBufs.Get().(*[64]byte)
	defer stackBufs.Put(buf)
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = len("goroutine ")
	var id uint64
	for i := prefix; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		id = id*10 + uint64(b[i]-'0')
	}
	return id
}
