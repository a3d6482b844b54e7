// Command tigris is the CLI of tigris, which instruments Go programs at build
// time and reads what they record: flags and output only, each command one
// call into a package below it (driver, rewriter, setup, traceconv, offline,
// export, dash, adminclient, bench).
//
// newRootCmd (root.go) lists the subcommands in help order rather than each
// registering itself from init. Every command's RunE reads its flags, calls
// the package that owns the work and prints what it returns; only main exits,
// with a "tigris:" prefix. README.md and docs/ describe the commands.
package main
