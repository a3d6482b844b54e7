package setup

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module writes a fresh module in a temporary directory.
func module(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":       "module example.com/fresh\n\ngo 1.22\n",
		"calc/calc.go": "package calc\n\nfunc Sum(n int) int { return n }\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCommands(t *testing.T) {
	got, err := Commands(Options{Version: "v1.2.3"})
	if err != nil || len(got) != 1 || !slices.Equal(got[0], []string{"get", RuntimeModule + "@v1.2.3"}) {
		t.Errorf("released: %q, %v", got, err)
	}
	rt, _ := filepath.Abs(filepath.Join("..", "runtime"))
	got, err = Commands(Options{RuntimeDir: filepath.Join("..", "runtime")})
	want := [][]string{
		{"mod", "edit", "-require=" + RuntimeModule + "@v0.0.0", "-replace=" + RuntimeModule + "=" + rt},
		{"get", RuntimeModule + "@v0.0.0"},
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
