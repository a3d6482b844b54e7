//go:build amd64 || arm64

package monitor

import "unsafe"

// haveGetg reports whether getg reads the running goroutine's g.
const haveGetg = true

// getg returns the running goroutine's g (g_amd64.s, g_arm64.s). Nothing but
// the address is assumed; glayout.go finds the few fields tigris reads.
func getg() unsafe.Pointer
