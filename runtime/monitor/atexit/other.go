//go:build !go1.23 || go1.28

package atexit

// Supported reports whether Add registers hooks with this toolchain: not with
// this one, whose exit hooks tigris has not been checked against.
const Supported = false

// Add does nothing with this toolchain.
func Add(f func()) {}
