package sorted

import (
	"cmp"
	"slices"
)

// Keys returns the keys of m in increasing order.
func Keys[M ~map[K]V, K cmp.Ordered, V any](m M) []K {
	return KeysFunc(m, cmp.Compare[K])
}

// KeysFunc returns the keys of m ordered by compare.
func KeysFunc[M ~map[K]V, K comparable, V any](m M, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}
