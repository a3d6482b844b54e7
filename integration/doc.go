// Package integration builds real programs with the real toolchain through
// `tigris toolexec` and runs them; the harness is integration/internal/itest.
package integration
