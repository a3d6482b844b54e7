package tempmod

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Write writes files (slash-separated paths relative to the module root,
// "go.mod" among them) into a new temporary directory and returns it. It
// skips the test when there is no go command to build the module with.
func Write(t testing.TB, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
