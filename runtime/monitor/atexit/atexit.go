//go:build go1.23 && !go1.28

package atexit

import _ "unsafe" // go:linkname

// hook mirrors internal/runtime/exithook.Hook.
type hook struct {
	F            func() // run at exit
	RunOnFailure bool   // also when the exit code is not 0
}

//go:linkname addHook internal/runtime/exithook.Add
func addHook(h hook)

// Supported reports whether Add registers hooks with this toolchain.
const Supported = true

// Add arranges for f to run when the program exits, whatever the exit code.
// Hooks run in reverse order of registration, on the goroutine that exits;
// f must not call os.Exit or panic.
func Add(f func()) { addHook(hook{F: f, RunOnFailure: true}) }
