// Package setup prepares a user's module for tigris (`tigris init`): it
// writes tigris.yaml, makes the module require the runtime module that
// instrumented code imports, and keeps that requirement alive.
//
// Only the runtime module (github.com/tigrisgo/tigris/runtime, go 1.18) and
// what it requires enter the user's module graph, never the tigris command:
// go.mod gains the runtime and participle, the latter as indirect (from go
// 1.17 on, which lists every module a build needs). The user's go line does
// not move: the go command raises a module's go line to a
// dependency's only from go 1.21 on. A go.mod without a go line is read as
// go 1.16, but any go command that writes it adds its own version: setup
// writes "go 1.16" first (ImpliedGoLine), so the language stays the one the
// module had. The runtime module requires nothing but participle (whose own
// graph is small and at go 1.18 or lower), so that requiring it upgrades no
// module a user already depends on but those. Since no package of the user's module
// imports the runtime, `go mod tidy` would drop the requirement again;
// setup therefore writes tigris_runtime.go, a file that imports the runtime
// packages under a build tag no build sets, which keeps the requirement (and
// makes `go mod vendor` copy the runtime) without changing any build.
//
// The commands it runs are printed, and the same commands can be run by hand
// (Commands returns them): `go get` of the runtime's packages at the tigris version for a
// released tigris, and for a development build a replace to the checkout's
// runtime directory followed by `go get`.
package setup
