// Package tempmod writes throwaway Go modules for tests: a set of files,
// go.mod among them, in a fresh temporary directory that the test removes.
package tempmod
