// Package rewriter is tigris's build-tool wrapper: the body of
// `tigris toolexec`, which the go command runs for every tool invocation of a
// build (`-toolexec`), and the source rewriter it applies to the packages the
// config selects.
//
// # One tool invocation (toolexec.go)
//
// `go build -toolexec="tigris toolexec"` makes the go command run
// `tigris toolexec /path/to/TOOL ARGS...`; RunTool is that invocation:
//
//   - Tools other than compile and link (asm, cgo, vet, pack, buildid, cover, ...)
//     run untouched: same argv, stdin, stdout, stderr and environment, and the
//     same exit status. No config is loaded for them.
//   - `compile -V=full` and `link -V=full`: in a build `tigris go` planned
//     (plan.go) compile answers with the compiler's own line, and link with its
//     line plus the plan's LinkID; without a plan both add a fingerprint of the
//     tigris binary, the config and the runtime sources (fingerprint.go).
//   - compile (compile.go): in a planned build only compiles whose -gcflags
//     carry DigestFlag are instrumented, with the selection stored under that
//     digest (PlannedSession) rather than the config. The argv is parsed
//     (argv.go) into a CompileJob (job.go): the parser knows only the few flags
//     the proxy acts on and which flags take a separate value, and keeps any
//     other flag (one a newer toolchain added, or one from -gcflags) as it is,
//     so a new compiler flag never breaks the proxy; the compiler first compiles
//     a reduced copy of the package with -m=2 to say which functions it inlines
//     (inlpass.go, below);
//     Session.Instrument (instrument.go) parses and type-checks the package,
//     matches its functions (signature.go; function literals are named as
//     the compiler names them, litname.go), plans the edits (the prologue,
//     callsite.go for call sites) and writes the rewritten files (splice.go) and
//     the probe table (probetable.go); the compiler then gets the new files and
//     an importcfg extended (importcfg.go) with the export data of the runtime
//     packages, which a nested go list resolves (resolve.go, with
//     resolvecache.go, goinvocation.go, pgo.go and lockfile.go).
//   - link (link.go): the run-time settings are linked in (-X), the runtime
//     packages are added to the importcfg when the go command did not list them,
//     and -checklinkname=0 lets package atexit reach the runtime's exit hooks.
//
// # The inlining pass (inlpass.go)
//
// A function the compiler inlines gets no probe, and one too small to be
// worth a probe neither (small.go): the compiler says which with -m=2. It is
// told on a reduced copy of the package: the body of every function that the
// compiler certainly cannot inline (a defer or go statement, go:noinline, or
// a lower bound of its inlining cost, costFloor, above the budget) and that
// cannot be small becomes a stub that the compiler cannot inline either. Its
// decisions on the other functions do not change: it charges a call of a
// function it does not inline the same whatever the body, and decides on the
// bodies it keeps. Two things could still move them, and are kept: a stub
// never takes away an instantiation of a generic function of the package,
// and a stub in a cycle of calls with a kept function refers to what the
// body called (the compiler decides on a cycle's functions in an order its
// calls set). The compiler prints each -m line as it decides, and analyses
// escapes only after it has inlined the whole package: at the first line of
// escape analysis every inlining line is out, and the proxy kills the
// compile there (compileUntilInlined), sparing escape analysis and the
// backend, which -m runs serially. On a large server package two fifths of
// the functions were stubbed and the pass took 4.0 s of CPU against 32.3 s
// for the whole package's compile; TestInliningPassAgreesWithCompiler
// compares both compiles' decisions.
// Under profile-guided optimization (the compiler inlines large hot
// functions) or when the reduced compile fails, the whole package is
// compiled, into the real output.
//
// On Unix the final tool replaces the proxy process (execve), so signals and the
// exit status are the tool's own and an unmatched package costs one process
// start; elsewhere, or when Stdio is not the process's own, the tool runs as a
// child and its exit status is returned as a *ToolExitError.
//
// # What the rewrite generates
//
// The prologue and the probe table: docs/design-notes.md, "The prologue". Go
// statements of instrumented functions (gostmt.go) start their goroutine
// through a generated wrapper inside a fine trace: docs/design-notes.md,
// "Traces across goroutines".
//
// Call sites matched by call(...) pointcuts (callsite.go) are how users watch
// calls into code they do not rewrite (std, third-party modules). A matched
// call that is a statement of its own, or the single right-hand side of an
// assignment, is bracketed on its own line:
//
//	__tgc3 := __tigris.Enter(&__tigris_p[7]); rows, err := db.Query(q); if __tgc3.On() { __tgc3.Exit(err) }
//
// Statement level keeps evaluation order and result types untouched (wrapping
// the expression in a closure would need the results' types spelled out, which
// the calling package may not be able to name). Calls elsewhere (inside
// expressions, in if/for/switch headers, in return, go and defer statements)
// are left alone, as are functions with goto (a declaration must not be
// jumped over). A call that panics is not counted: there is no defer at a
// call site.
//
// # Names of function literals (litname.go)
//
// Function literals are named the way the compiler names the functions it
// makes of them, the names runtime.FuncForPC, pprof and tracebacks print
// after the package path: F.func1 for the first literal of F, F.func1.1 for the first
// literal inside that one, (*T).M.func2, Gen[...].func1 (type arguments print as
// "[...]"), init.0.func1 in the first func init, init.func1 in the initializer of
// a package-level variable. The compiler (cmd/compile/internal/ir closureName,
// noder's unified IR reader) numbers the literals of each function in the order
// its IR writer writes the body, which is source order except for code it leaves
// out before naming anything:
//
//   - statements after a return, goto, panic or terminating if/block, when no
//     label follows (writer.stmts, terminates);
//   - the branch of an if whose condition is constant, and the right operand of
//     && and || that a constant left operand decides (staticBool);
//   - the post statement and body of a for loop whose condition is constant
//     false;
//   - the clauses of a switch on a constant that a constant case rules out;
//   - constant expressions, written as their value.
//
// Package-level initializers are numbered in initialization order
// (types.Info.InitOrder), as the package's init function runs them.
//
// The body of a range-over-func loop becomes a function of its own, F-range1.
// Go 1.26 numbers the literals inside it with those of the enclosing function
// (F.func2); from Go 1.27 on the range body is their enclosing function
// (F-range1.1). Literals in a function named _ are never compiled into
// anything callable and get no name.
//
// Where the compiler inlines the enclosing function, it makes copies of the
// literal. Go 1.27 gives a copy the literal's own name, except that a nested
// literal copied into a declared function has ".func" before its number
// (F.func1.func1 for F.func1.1). Go 1.26 names a copy after the function it
// was inlined into (G.F.func1, numbered among G's literals). Profiles and
// tracebacks show the copies' names.
//
// # Keys of the build cache
//
// The go command asks every tool for its identity with `TOOL -V=full` and keys
// its build cache on the answer (release toolchains on the whole line, devel
// toolchains on the content ID in its buildID= field), never on the -toolexec
// string. Without a plan (fingerprint.go) an active session answers for
// compile and link with the real line plus " tigris=<hex>", a SHA-256 over
// everything that changes what tigris makes the tools produce: the tigris
// executable (its bytes; the hash is cached by path, size and mtime); for
// compile, Session.BuildHash (what in tigris.yaml changes compiler output),
// for link, Session.ConfigHash (all of it, run-time settings included, which
// the linker embeds); and the runtime module's sources as the user's module
// graph resolves it (runtimeDirs; an immutable module-cache version is named,
// not read). So a config change recompiles what it affects (a change of
// run-time settings only relinks), reverting it hits the cache again, and a
// plain `go build` afterwards sees the plain line and plain objects.
//
// In a planned build (digest.go) the compiler keeps its own line and each
// instrumented package carries a digest in its -gcflags. The digest must
// change whenever the instrumenter's output for the package can change, and
// should change only then: it covers the tigris binary, the generated code's
// shape, the runtime sources the probes import (their export data is not in
// the package's compile key, because the go command does not know the package
// imports them), the build options of the config, and what the pointcuts can
// select in the package as far as its syntax tells (pointcut.Restrict).
//
// # Export data of the runtime (resolve.go)
//
// A compile's -importcfg lists only what the go command knows the package
// imports, and the link's importcfg.link only what it knows the binary
// contains. For the runtime packages instrumented code imports, the proxy asks
// a nested `go list -deps -export` with the parent's build flags, once per
// build (a cache in $WORK and a lock file) and across builds (a cache in the
// user's cache directory). Where the flags come from, the caches and the
// recursion guard: docs/design-notes.md, "Resolving the runtime's export data".
//
// # The environment (environ.go)
//
// RunTool reads the environment once (TOOLEXEC_IMPORTPATH, TIGRIS_NESTED,
// GOFLAGS, GOWORK, GOENV and the whole list the tools inherit) into a value
// that the proxy passes down; no other file reads it.
//
// # The toolchain check (toolchain.go)
//
// tigris reads the export data the build's compiler wrote (go/types through
// go/importer) and hands the compiler code it generated; a tigris built with
// another Go release than the build's reads export data of a format it may
// not know and fails deep inside the reader. So before it instruments
// anything, the proxy compares the release of the toolchain running the build
// (GOROOT/VERSION next to the tool) with its own, and names the fix in one
// line.
//
// # Also here
//
// ListMatches (match.go) answers `tigris match` with the same matching code;
// PackageDigest and PackageSyntax (digest.go) are what the driver keys each
// instrumented package on; version.go checks that the module graph's runtime
// speaks the code this tigris generates.
//
// The rewriter never edits a file on disk: rewritten sources go to the build's
// work directory, and every line of a rewritten file stays where it was
// (docs/design-notes.md, "Splicing text").
package rewriter
