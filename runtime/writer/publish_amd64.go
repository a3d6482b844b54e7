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
// store is in assembly so that the compiler cannot move the record's stores
// after it. Under the race detector, which cannot see it, atomic.Store is
// used (publish_other.go).
func publish(p *atomic.Uint64, v uint64) { storeRelease((*uint64)(unsafe.Pointer(p)), v) }

// storeRelease is a plain 64-bit store (publish_amd64.s).
//
//go:noescape
func storeRelease(p *uint64, v uint64)

// setOwn stores v into *p, a word that only the producer of one queue writes
// and reads (shard.tailSeen). Producers that take turns on a P are ordered
// by the scheduler, so a plain store is enough; atomic.Store would be an
// XCHG, a full barrier, at every record from the wake mark on. The race
// detector cannot see that order (publish_other.go stores atomically).
func setOwn(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }
