//go:build !amd64 || race

package writer

import "sync/atomic"

// publish stores v into *p with (at least) release semantics; see
// publish_amd64.go.
func publish(p *atomic.Uint64, v uint64) { p.Store(v) }
