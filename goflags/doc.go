// Package goflags reads the go command's command lines as tigris needs them:
// which subcommand, build flags and packages a go command runs with (Parse),
// so that a nested go command can build the same way; how a per-package flag
// such as -gcflags=pattern=flags applies to a package (PerPackage), so that
// tigris can add a flag for one package without changing what the user's
// flags do to it; and the quoting the go command uses in such flag values and
// in GOFLAGS (Split, Join).
//
// It follows cmd/go's own rules (cmd/go/internal/load/flag.go, search.go and
// cmd/internal/quoted), which are not importable.
package goflags
