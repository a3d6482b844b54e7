// Command buildcost measures what tigris adds to a build (issue 19): for a
// target it times plain and instrumented builds from an empty cache and on
// warm ones, counts the compiler invocations of each, and reports the largest
// process's peak memory. It prints a Markdown table for docs/performance.md.
//
// Compiles are counted three ways: the compiles the go command runs (go build
// -x), those of them that go through the instrumenter (they carry the
// driver's -tigris digest; each runs the compiler twice when it keeps a
// probe, once with -m to learn what the compiler inlines), and the runtime
// packages tigris's nested go list compiles, which go build -x does not show:
// the packages instrumented code imports (and their imports) that the cache
// lacked before the step and holds after it, less those the go command
// compiled itself.
//
//	go run ./bench/buildcost            # examples/moobench and golang.org/x/sync
//	go run ./bench/buildcost -target moobench
//	go run ./bench/buildcost -warm-only   # counts on a warm cache only (no empty-cache steps)
//
// Each step runs once; run it on an idle machine. The empty-cache steps
// compile the standard library from scratch (about a minute each on two
// cores).
package main
