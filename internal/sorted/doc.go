// Package sorted returns a map's keys in order: what
// slices.Sorted(maps.Keys(m)) does from Go 1.23, for the root module, whose
// go line stays at the lowest its dependencies allow (go.mod) so that a
// module adding tigris as a tool keeps its own.
package sorted
