//go:build !amd64 || race

package writer

import "sync/atomic"

// publish stores v into *p with (at least) release semantics; see
// publish_amd64.go.
func publish(p *atomic.Uint64, v uint64) { p.Store(v) }

// setOwn stores v into *p, a word that only the producer pinned to one P
// writes; see publish_amd64.go. Atomic here, so that the race detector
// sees the order between producers that take turns on a P.
func setOwn(p *atomic.Uint64, v uint64) { p.Store(v) }
