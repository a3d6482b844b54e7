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
