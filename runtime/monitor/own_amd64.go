//go:build amd64 && !race

package monitor

import (
	"sync/atomic"
	"unsafe"
)

// setOwn stores v into *p, a word of a goroutine's trace context that only
// its goroutine writes and that the writer's close reads from another
// (open.go). On amd64 (TSO) a plain store is seen after the stores before it,
// and costs what the plain store it replaces did; atomic.Store would be an
// XCHG, a full barrier, in every fine call. Under the race detector and
// elsewhere it is atomic (own_other.go).
func setOwn(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }

// setOwn32 is setOwn for the context's depth, ctx.ess.
func setOwn32(p *uint32, v uint32) { *p = v }
