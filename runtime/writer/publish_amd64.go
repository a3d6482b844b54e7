//go:build amd64 && !race

package writer

import (
	"sync/atomic"
	"unsafe"
)

// publish stores v into *p with release semantics: every store the producer
// made before (the record in its slot) is visible to a consumer that loads
// the new value. On amd64 (TSO) a plain MOV is a release store; atomic.Store
// would be an XCHG, a full barrier that waits for the store buffer to drain,
// which at ring sizes beyond the cache made it most of a record's cost. The
// compiler keeps stores in program order (each store's memory state is the
// previous store's), so a plain Go store stays after the record's; an
// assembly store did the same at the cost of a call, about 1 ns of every
// record. TestPublishStaysLast checks the order in Append's machine code.
// Under the race detector, which cannot see it, atomic.Store is used
// (publish_other.go).
func publish(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }

// setOwn stores v into *p, a word that only the producer pinned to one P
// writes (shard.tailSeen, Null's per-P counts; others may load it). Producers
// that take turns on a P are ordered by the scheduler, so a plain store is
// enough (an aligned 8-byte store is never seen torn); atomic.Store would be
// an XCHG, a full barrier, at every record. The race detector cannot see
// that order (publish_other.go stores atomically).
func setOwn(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
