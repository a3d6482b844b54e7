//go:build !amd64 && !arm64

package monitor

import "unsafe"

// haveGetg reports whether getg reads the running goroutine's g: not on this
// architecture, where the monitor uses its portable goroutine slots.
const haveGetg = false

func getg() unsafe.Pointer { return nil }
