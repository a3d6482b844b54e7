package workdir

import (
	"os"
	"testing"
)

// Chdir makes dir the working directory until t and its subtests end. The
// working directory is the process's: t must not run in parallel with tests
// that depend on it, as with testing.T.Chdir.
func Chdir(t testing.TB, dir string) {
	t.Helper()
	old, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Chdir(old); err != nil {
			t.Errorf("restoring the working directory: %v", err)
		}
	})
}
