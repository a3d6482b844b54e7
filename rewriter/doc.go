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
//   - compile (compile.go): in a planned build only compiles whose -gcflags carry
//     DigestFlag are instrumented, with the selection stored under that digest
//     (PlannedSession) rather than the config. The argv is parsed (argv.go) into a CompileJob
//     (job.go); the compiler first compiles the package unchanged with -m to say
//     which functions it inlines; Session.Instrument (instrument.go) parses and
//     type-checks the package, matches its functions (signature.go), plans the
//     edits (the prologue, callsite.go for call sites) and writes the rewritten
//     files (splice.go) and the probe table (probetable.go); the compiler then
//     gets the new files and an importcfg extended (importcfg.go) with the export
//     data of the runtime packages, which a nested go list resolves
//     (resolve.go, with goinvocation.go, pgo.go and lockfile.go).
//   - link (link.go): the run-time settings are linked in (-X), the runtime
//     packages are added to the importcfg when the go command did not list them,
//     and -checklinkname=0 lets package atexit reach the runtime's exit hooks.
//
// On Unix the final tool replaces the proxy process (execve), so signals and the
// exit status are the tool's own and an unmatched package costs one process
// start; elsewhere, or when Stdio is not the process's own, the tool runs as a
// child and its exit status is returned as a *ToolExitError.
//
// # Also here
//
// ListMatches (match.go) answers `tigris match` with the same matching code;
// PackageDigest and PackageSyntax (digest.go) are what the driver keys each
// instrumented package on; version.go checks that the module graph's runtime
// speaks the code this tigris generates, toolchain.go that the build's Go
// release is tigris's own.
//
// The rewriter never edits a file on disk: rewritten sources go to the build's
// work directory, and every line of a rewritten file stays where it was
// (docs/design-notes.md, "Splicing text").
package rewriter
