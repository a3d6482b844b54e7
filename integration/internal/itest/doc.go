// Package itest is the harness of tigris's integration tests (integration,
// integration/setups, integration/service and integration/compat): they build
// real programs with the real toolchain through `tigris toolexec` and run them.
// It is shared so that slow suites can live in packages of their own, each
// with its own test timeout.
//
// Main (called from each package's TestMain) builds the tigris binary (go
// build ./cmd/tigris from the repo root), and every build of every test uses
// the go command's own GOCACHE, the one `go test` itself builds with: each
// distinct tigris fingerprint makes the go command recompile the standard
// library (≈13 s for net/http's dependencies), so a private cache per test or
// per package would make the suites many minutes long on a cold machine, and
// the plain standard library and tigris's dependencies are compiled once for
// everything. Instrumented objects never mix with plain ones there (their
// cache keys carry the fingerprint). The tigris user cache (self hash,
// cross-build resolutions) lives in os.TempDir()/tigris-itest-cache, kept
// between runs and away from the user's.
//
// Test modules (NewModule) require the runtime module
// github.com/tigrisgo/tigris/runtime v0.0.0 with a replace to the repo's
// runtime directory and a copy of its go.sum (RuntimeRequire), and are built with
// GOFLAGS=-mod=mod, GOWORK=off, GOTOOLCHAIN set to the release the tests run on
// and the inherited GOPROXY, so everything resolves from the module cache.
//
// Tests skip (not fail) when the go command is missing or under -short.
package itest
