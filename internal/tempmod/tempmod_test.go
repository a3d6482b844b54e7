package tempmod

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := Write(t, map[string]string{"go.mod": "module example.com/m\n", "a/b/c.go": "package b\n"})
	for name, want := range map[string]string{"go.mod": "module example.com/m\n", "a/b/c.go": "package b\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}
