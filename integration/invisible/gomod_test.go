package invisible

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// supportedGoLines are the go lines docs/compatibility.md promises to keep:
// none, every release from 1.11 (the first with modules) to the toolchain's,
// with and without a patch version.
func supportedGoLines() []string {
	lines := []string{""}
	minor := 0
	fmt.Sscanf(strings.TrimPrefix(runtime.Version(), "go1."), "%d", &minor)
	for m := 11; m <= minor; m++ {
		lines = append(lines, fmt.Sprintf("1.%d", m))
	}
	// Patch versions (written since 1.21), and the toolchain's own version.
	return append(lines, "1.21.0", "1.22.3", strings.TrimPrefix(runtime.Version(), "go"))
}

// TestGoLineKept: for every supported go line, tigris init and go mod tidy
// leave a module's go line as it was (a missing one becomes the go 1.16 the
// go command reads it as), and add no toolchain line. TestOldGoLine runs the
// tests of such modules; this one covers every line.
func TestGoLineKept(t *testing.T) {
	files := map[string]string{"lib/lib.go": "package lib\n\n// F is a function to instrument.\nfunc F(n int) int { return n + 1 }\n"}
	for _, line := range supportedGoLines() {
		name := line
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			dir := initModule(t, line, files) // fails when the go line moved
			if toolchain := goModField(t, dir, "Toolchain"); toolchain != "" {
				t.Errorf("tigris init added a toolchain line %q", toolchain)
			}
		})
	}
}

// goModField returns a field of `go mod edit -json`'s top level that holds a
// name ("Toolchain": {"Name": ...}).
func goModField(t *testing.T, dir, field string) string {
	t.Helper()
	out := itest.Go(t, dir, nil, "mod", "edit", "-json")
	var mod map[string]any
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		t.Fatal(err)
	}
	if m, ok := mod[field].(map[string]any); ok {
		s, _ := m["Name"].(string)
		return s
	}
	return ""
}

// testifyFiles: a module that already depends on older versions of modules
// a careless runtime module would require too (testify and yaml, common test
// helpers).
var testifyFiles = map[string]string{
	"calc/calc.go": `package calc

// Add adds b to a, one at a time (too long to be inlined: it gets a probe).
func Add(a, b int) int {
	for i := 0; i < b; i++ {
		a++
	}
	for i := 0; i > b; i-- {
		a--
	}
	return a
}
`,
	"calc/calc_test.go": `package calc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"gopkg.in/yaml.v3"
)

func TestAdd(t *testing.T) {
	var v struct{ N int }
	assert.NoError(t, yaml.Unmarshal([]byte("n: 2"), &v))
	assert.Equal(t, 4, Add(v.N, 2))
}
`,
}

// TestRequirementsKept: tigris init adds the runtime module and its few
// dependencies to the module graph and changes the version of no module the
// user's module already selected.
func TestRequirementsKept(t *testing.T) {
	itest.RequireGo(t)
	dir := t.TempDir()
	itest.WriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/fixture\n\ngo 1.21\n")
	for name, content := range testifyFiles {
		itest.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	itest.Go(t, dir, nil, "get", "github.com/stretchr/testify@v1.8.4", "gopkg.in/yaml.v3@v3.0.1")
	itest.Go(t, dir, nil, "mod", "tidy")
	before := moduleVersions(t, dir)
	tigrisInit(t, dir, "1.21")
	after := moduleVersions(t, dir)
	for path, v := range before {
		if after[path] != v {
			t.Errorf("%s was %s before tigris init and is %s after it", path, v, after[path])
		}
	}
	if after[itest.RuntimeModule] == "" {
		t.Errorf("the runtime module is not in the module graph after tigris init: %v", after)
	}
	sameVerdict(t, dir, nil, "./...")
}

// moduleVersions maps every module of dir's build list to its version. It
// runs with -mod=readonly: a go command that may write go.mod would add a
// missing go line.
func moduleVersions(t *testing.T, dir string) map[string]string {
	t.Helper()
	vs := map[string]string{}
	out := itest.Go(t, dir, []string{"GOFLAGS=-mod=readonly"}, "list", "-m", "all")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			vs[f[0]] = f[1]
		}
	}
	return vs
}
