// Package invisible holds the tests of issue 18's promise: adding tigris to a
// module changes neither its go line (so neither its language version nor
// its vet checks), nor the versions of its dependencies, nor the compiler's
// inlining and escape decisions, nor the standard library, and leaves no
// goroutine of its own waiting in the program. Fixture modules exercise each
// cause (gomod_test.go, verdict_test.go, escape_test.go); TestRealModules runs
// published modules' own tests as their main module, plain and instrumented.
package invisible
