package costcheck

import (
	"bytes"
	"os"
	"testing"
)

// TestSameAsRuntimeCopy: this package is a copy of the runtime module's
// (runtime/internal/costcheck, whose tests check the logic); the two must not
// drift apart.
func TestSameAsRuntimeCopy(t *testing.T) {
	mine, err := os.ReadFile("costcheck.go")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.ReadFile("../../runtime/internal/costcheck/costcheck.go")
	if err != nil {
		t.Skipf("no runtime module beside this one: %v", err)
	}
	if !bytes.Equal(mine, theirs) {
		t.Error("internal/costcheck/costcheck.go differs from runtime/internal/costcheck/costcheck.go; change both")
	}
}
