// Package buildcost pins what a `tigris go` build compiles (issue 19): counts
// of the go command's compiler invocations, never seconds.
package buildcost
