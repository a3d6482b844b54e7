// Package num holds the min and max of two ordered values for the runtime
// module, whose go line (1.18, see go.mod) predates the min and max builtins.
// They behave like the builtins for NaN: a NaN argument gives NaN.
package num

import "cmp"

// Min returns the smaller of x and y.
func Min[T cmp.Ordered](x, y T) T {
	if x != x {
		return x
	}
	if y != y || y < x {
		return y
	}
	return x
}

// Max returns the larger of x and y.
func Max[T cmp.Ordered](x, y T) T {
	if x != x {
		return x
	}
	if y != y || y > x {
		return y
	}
	return x
}
