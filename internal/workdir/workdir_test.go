package workdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestChdir(t *testing.T) {
	before, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Run("inside", func(t *testing.T) {
		Chdir(t, dir)
		got, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.EvalSymlinks(dir)
		if got, _ = filepath.EvalSymlinks(got); got != want {
			t.Errorf("working directory %s, want %s", got, want)
		}
	})
	if after, _ := os.Getwd(); after != before {
		t.Errorf("after the subtest: %s, want %s back", after, before)
	}
}
