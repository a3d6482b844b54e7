// Package invisible holds the tests of issue 18's promise: adding tigris to a
// module changes neither its language version, nor the compiler's inlining
// and escape decisions, nor the standard library.
package invisible
