// Package setups builds instrumented programs the ways users' CI jobs build
// them: vendoring, workspaces, GOFLAGS, -race, -trimpath and -tags, cross
// builds. It is apart from package integration so that these builds, most of
// which compile the standard library for flags of their own, have a test
// timeout of their own.
package setups
