// Package atexit runs a function when the program exits: when main returns
// and when os.Exit is called, with any exit code. tigris-built binaries pass
// [Add] to the monitor (monitor.Links.AtExit) so that the trace is flushed
// before the process ends, without rewriting main or calls of os.Exit, and
// without any change to the standard library.
//
// It registers with the runtime's own exit hooks (internal/runtime/exithook,
// which runs them for both kinds of exit) through a go:linkname reference.
// The linker refuses such references to internal packages unless it is given
// -checklinkname=0, which tigris's link step adds to the links of binaries
// that contain this package. A plain `go build` of a program that imports
// this package therefore fails to link: only generated code imports it.
//
// The hook's shape is checked against each supported toolchain
// (TestExitHookShape in the tigris module reads GOROOT's exithook source), and
// the file is built only for the Go releases that were checked; with any other
// toolchain Add does nothing and records buffered at exit are lost.
package atexit
