package setup

import (
	"bytes"
	"encoding/json"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// runtimeDir is the runtime module of this checkout.
var runtimeDir = filepath.Join("..", "runtime")

// goJSON runs the go command in the runtime module, outside the workspace,
// and decodes its JSON output into one value per object.
func goJSON[T any](t *testing.T, args ...string) []T {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = runtimeDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, stderr.Bytes())
	}
	var vs []T
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var v T
		if err := dec.Decode(&v); err == io.EOF {
			return vs
		} else if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
}

// TestRuntimeModuleRequirements: what tigris init adds to a user's module
// graph is the runtime module and what its go.mod requires; a requirement
// there (a test helper such as testify, say) would be upgraded in every user's
// module that already depends on it. Only the grammar library may be there.
func TestRuntimeModuleRequirements(t *testing.T) {
	mod := goJSON[struct {
		Go      string
		Require []struct{ Path string }
	}](t, "mod", "edit", "-json")[0]
	if mod.Go != "1.18" {
		t.Errorf("the runtime module's go line is %s; it stays at 1.18 (docs/compatibility.md, Go lines)", mod.Go)
	}
	allowed := map[string]bool{"github.com/alecthomas/participle/v2": true}
	for _, r := range mod.Require {
		if !allowed[r.Path] {
			t.Errorf("the runtime module requires %s: every user's module graph would get it, and tigris init would upgrade the user's own requirement of it; keep test helpers out of runtime/go.mod", r.Path)
		}
	}
}

// TestRuntimeModuleGraphGoLines: no module of the runtime's graph declares a go
// line above the runtime's own 1.18. From go 1.21 on a dependency's go line
// raises the go line of a module that requires it, so any such module would
// move the user's language version.
func TestRuntimeModuleGraphGoLines(t *testing.T) {
	mods := goJSON[struct {
		Path, Version, GoVersion string
		Main                     bool
	}](t, "list", "-m", "-json", "all")
	if len(mods) < 2 {
		t.Fatalf("go list -m all in the runtime module listed %d modules", len(mods))
	}
	for _, m := range mods {
		if m.GoVersion != "" && version.Compare("go"+m.GoVersion, "go1.18") > 0 {
			t.Errorf("%s %s declares go %s, above the runtime's 1.18: requiring the runtime would raise a user's go line", m.Path, m.Version, m.GoVersion)
		}
	}
}
