package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/tempmod"
)

// module writes a fresh module in a temporary directory.
func module(t *testing.T) string {
	t.Helper()
	return tempmod.Write(t, map[string]string{
		"go.mod":       "module example.com/fresh\n\ngo 1.22\n",
		"calc/calc.go": "package calc\n\nfunc Sum(n int) int { return n }\n",
	})
}

func TestCommands(t *testing.T) {
	got, err := Commands(Options{Version: "v1.2.3"})
	if err != nil || len(got) != 1 || !slices.Equal(got[0], []string{"get", RuntimePackages + "@v1.2.3"}) {
		t.Errorf("released: %q, %v", got, err)
	}
	rt, _ := filepath.Abs(filepath.Join("..", "runtime"))
	got, err = Commands(Options{RuntimeDir: filepath.Join("..", "runtime")})
	want := [][]string{
		{"mod", "edit", "-require=" + RuntimeModule + "@v0.0.0", "-replace=" + RuntimeModule + "=" + rt},
		{"get", RuntimePackages + "@v0.0.0"},
	}
	if err != nil || !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("checkout: %q, %v; want %q", got, err, want)
	}
	if _, err := Commands(Options{RuntimeDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "--runtime") {
		t.Errorf("a directory that is not the runtime: %v", err)
	}
	if _, err := Commands(Options{}); err == nil || !strings.Contains(err.Error(), "development build") {
		t.Errorf("neither: %v", err)
	}
}

// TestRunNoGet: --no-get writes tigris.yaml and leaves go.mod alone; a
// second run keeps the file unless forced.
func TestRunNoGet(t *testing.T) {
	dir := module(t)
	var out bytes.Buffer
	opts := Options{Dir: filepath.Join(dir, "calc"), NoGet: true, Out: &out, Err: &out}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tigris.yaml")); err != nil {
		t.Fatalf("no tigris.yaml at the module root: %v\n%s", err, out.String())
	}
	if mod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); strings.Contains(string(mod), "tigris") {
		t.Errorf("--no-get changed go.mod:\n%s", mod)
	}
	out.Reset()
	if err := Run(context.Background(), opts); err != nil || !strings.Contains(out.String(), "kept ") {
		t.Errorf("second run: %v\n%s", err, out.String())
	}
}

// TestRunCheckout: with a checkout's runtime, init requires it through a
// replace, writes tigris_runtime.go and prints exactly the commands it ran.
// Nothing is fetched: the runtime's dependencies are in the module cache of
// the tigris build running this test.
func TestRunCheckout(t *testing.T) {
	dir := module(t)
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	var out, errs bytes.Buffer
	opts := Options{Dir: dir, RuntimeDir: filepath.Join("..", "runtime"), Out: &out, Err: &errs}
	if err := Run(context.Background(), opts); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	rt, _ := filepath.Abs(filepath.Join("..", "runtime"))
	for _, want := range []string{"require " + RuntimeModule + " v0.0.0", "replace " + RuntimeModule + " => " + rt, "\ngo 1.22\n"} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, KeepFile)); err != nil {
		t.Error(err)
	}
	cmds, _ := Commands(opts)
	for _, c := range cmds {
		if line := "go " + strings.Join(quoteAll(c), " "); !strings.Contains(out.String(), line+"\n") {
			t.Errorf("init did not print %q:\n%s", line, out.String())
		}
	}
}

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

// TestRunNoGoLine: a go.mod without a go line gets the go 1.16 the go command
// reads it as, written down before go get could write its own version, and
// init prints the command. The module proxy stays reachable: a go 1.16 module
// has an unpruned graph, so go get of the runtime's packages reads the go.mod
// of every module below participle, which the cache of a tigris build lacks.
func TestRunNoGoLine(t *testing.T) {
	dir := module(t)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/fresh\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	var out, errs bytes.Buffer
	if err := Run(context.Background(), Options{Dir: dir, RuntimeDir: filepath.Join("..", "runtime"), Out: &out, Err: &errs}); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(mod), "\ngo "+ImpliedGoLine+"\n") {
		t.Errorf("go.mod has not go %s:\n%s", ImpliedGoLine, mod)
	}
	if !strings.Contains(out.String(), "go mod edit -go="+ImpliedGoLine+"\n") {
		t.Errorf("init did not print the go mod edit:\n%s", out.String())
	}
}

// TestTemplateRuleNamesOwnPackage: the example rule of the tigris.yaml init
// writes names one of the module's own packages: the first that is not a
// main package, or the only one there is.
func TestTemplateRuleNamesOwnPackage(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"two packages and a command", map[string]string{
			"go.mod":           "module example.com/fresh\n\ngo 1.22\n",
			"main.go":          "package main\n\nfunc main() {}\n",
			"calc/calc.go":     "package calc\n\nfunc Sum(n int) int { return n }\n",
			"store/store.go":   "package store\n\nfunc Get() int { return 1 }\n",
			"cmd/tool/main.go": "package main\n\nfunc main() {}\n",
		}, "example.com/fresh/calc"},
		{"one package", map[string]string{
			"go.mod":  "module example.com/one\n\ngo 1.22\n",
			"main.go": "package main\n\nfunc main() {}\n",
		}, "example.com/one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := tempmod.Write(t, c.files)
			var out bytes.Buffer
			if err := Run(context.Background(), Options{Dir: dir, NoGet: true, Out: &out, Err: &out}); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			yaml, err := os.ReadFile(filepath.Join(dir, "tigris.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			rule := regexp.MustCompile(`(?m)^\s*#\s+- fine: execution\(\* (\S+)\.[^.]*\(\.\.\)\)$`).FindSubmatch(yaml)
			if rule == nil {
				t.Fatalf("tigris.yaml has no example rule:\n%s", yaml)
			}
			if got := string(rule[1]); got != c.want {
				t.Errorf("the example rule names package %s, want %s (a package of the module)", got, c.want)
			}
		})
	}
}
