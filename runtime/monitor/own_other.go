//go:build !amd64 || race

package monitor

import (
	"sync/atomic"
	"unsafe"
)

// setOwn stores v into *p with release semantics; see own_amd64.go.
func setOwn(p *atomic.Uint64, v uint64) { p.Store(v) }

// setOwn32 is setOwn for the context's depth, ctx.ess.
func setOwn32(p *uint32, v uint32) { (*atomic.Uint32)(unsafe.Pointer(p)).Store(v) }
