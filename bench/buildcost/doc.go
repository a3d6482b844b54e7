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
//	go run ./bench/buildcost -rounds 5    # the ratios: medians of paired rounds
//
// Each step of the table runs once; run it on an idle machine. The
// empty-cache steps compile the standard library from scratch (seconds to a
// minute each on two cores). -rounds N measures only the builds behind the
// ratios, tigris and plain in turn, and prints medians and the median of the
// per-pair ratios: one slow or lucky run moves neither. Every cache gets its
// own user cache directory (tigris's shared resolution of the runtime would
// otherwise point into an earlier step's cache and hide the runtime's
// compile from an "empty" one).
package main
