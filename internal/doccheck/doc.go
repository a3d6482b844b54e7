// Package doccheck holds the tests that keep the repository's documents in
// step with its code: ARCHITECTURE.md's code map against each folder's doc.go
// (and its invariant that nothing registers itself from init),
// docs/limits.md against the limits the code enforces and the errors it gives,
// and the user documents (README.md, docs/) against the project's internals:
// they cite no issue numbers, and docs/performance.md leads with current
// results, its earlier rounds on docs/performance-history.md. What the docs
// say tigris init adds to a user's go.mod is checked against a real init of a
// fresh module.
//
// It has no code of its own; its tests read the repository from two folders
// up.
package doccheck
