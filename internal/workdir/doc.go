// Package workdir changes a test's working directory for the length of the
// test: what testing.T.Chdir does from Go 1.24, for the root module, whose go
// line stays at the lowest its dependencies allow (go.mod) so that a module
// adding tigris as a tool keeps its own.
package workdir
