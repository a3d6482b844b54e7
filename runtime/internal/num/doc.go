// Package num holds the min and max of two ordered values for the runtime
// module, whose go line (1.18, see go.mod) predates the min and max builtins.
// They behave like the builtins for NaN: a NaN argument gives NaN.
package num
