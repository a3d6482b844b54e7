package rewriter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fakeTool writes a shell script named name that prints its arguments and its
// standard input, answers -V=full like a release toolchain, and exits with the
// status in $FAKE_EXIT.
func fakeTool(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	path := filepath.Join(t.TempDir(), name)
	script := `#!/bin/sh
if [ "$1" = "-V=full" ]; then echo "` + name + ` version go1.26.8"; exit 0; fi
for a in "$@"; do echo "arg:$a"; done
echo "env:$FAKE_VAR"
cat
echo "to stderr" >&2
if [ -n "$FAKE_SIGNAL" ]; then kill -TERM $$; fi
exit ${FAKE_EXIT:-0}
`
	if err := os.WriteFile(path, []byte(script), 0o777); err != nil {
		t.Fatal(err)
	}
	return path
}

// inactiveOptions are options for a session without a config.
func inactiveOptions(t *testing.T) SessionOptions {
	t.Setenv("TIGRIS_CONFIG", "")
	return SessionOptions{Dir: t.TempDir()}
}

func runFake(t *testing.T, opts SessionOptions, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = RunTool(opts, args, Stdio{Stdin: strings.NewReader("from stdin\n"), Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}

func TestRunToolPassesThrough(t *testing.T) {
	t.Setenv("FAKE_VAR", "v1")
	for _, name := range []string{"asm", "vet", "cgo", "compile", "link"} {
		t.Run(name, func(t *testing.T) {
			tool := fakeTool(t, name)
			t.Setenv("FAKE_EXIT", "0")
			out, errOut, err := runFake(t, inactiveOptions(t), tool, "-p", "x y", "@notaresponsefile", "a.go")
			if err != nil {
				t.Fatalf("RunTool: %v", err)
			}
			// An inactive session does not even parse the argv (the @argument is
			// not a response file the tool could read: it must arrive untouched).
			want := "arg:-p\narg:x y\narg:@notaresponsefile\narg:a.go\nenv:v1\nfrom stdin\n"
			if out != want || errOut != "to stderr\n" {
				t.Errorf("stdout %q, stderr %q; want %q, %q", out, errOut, want, "to stderr\n")
			}
		})
	}
}

func TestRunToolExitStatus(t *testing.T) {
	tool := fakeTool(t, "compile")
	t.Setenv("FAKE_EXIT", "3")
	_, _, err := runFake(t, inactiveOptions(t), tool, "x.go")
	var te *ToolExitError
	if !errors.As(err, &te) || te.Code != 3 || te.Tool != "compile" {
		t.Errorf("RunTool error = %#v; want ToolExitError{compile, 3}", err)
	}

	t.Setenv("FAKE_EXIT", "0")
	t.Setenv("FAKE_SIGNAL", "1")
	_, _, err = runFake(t, inactiveOptions(t), fakeTool(t, "asm"))
	if !errors.As(err, &te) || te.Code != 128+15 {
		t.Errorf("tool killed by SIGTERM: error = %#v; want code 143", err)
	}
}

func TestRunToolVersionInactive(t *testing.T) {
	for _, name := range []string{"compile", "link", "asm"} {
		out, _, err := runFake(t, inactiveOptions(t), fakeTool(t, name), "-V=full")
		if err != nil {
			t.Fatal(err)
		}
		if want := name + " version go1.26.8\n"; out != want {
			t.Errorf("%s -V=full = %q; want %q unchanged", name, out, want)
		}
	}
}

func TestRunToolErrors(t *testing.T) {
	if _, _, err := runFake(t, inactiveOptions(t)); err == nil {
		t.Error("RunTool without a tool: no error")
	}
	_, _, err := runFake(t, inactiveOptions(t), filepath.Join(t.TempDir(), "asm"))
	var te *ToolExitError
	if err == nil || errors.As(err, &te) {
		t.Errorf("missing tool: error = %v; want a proxy error", err)
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/local/go/pkg/tool/linux_amd64/compile": "compile",
		`C:\Go\pkg\tool\windows_amd64\link.exe`:      "link",
		"asm":                                        "asm",
	} {
		if runtime.GOOS != "windows" && strings.Contains(in, `\`) {
			continue
		}
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestWorkFromObjDir(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/go-build123/b012/importcfg":      "/tmp/go-build123",
		"/tmp/go-build123/b001/importcfg.link": "/tmp/go-build123",
		"/home/me/importcfg":                   "",
		"":                                     "",
	} {
		if got := workFromObjDir(filepath.FromSlash(in)); got != filepath.FromSlash(want) {
			t.Errorf("workFromObjDir(%q) = %q; want %q", in, got, want)
		}
	}
}

// TestKeepDir: --keep never deletes what tigris did not write. A directory
// without the marker is refused untouched; a kept one loses its files but not
// its subdirectories (other packages' kept sources).
func TestKeepDir(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, "example.com", "app")
	if err := os.MkdirAll(user, 0o777); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(user, "main.go")
	if err := os.WriteFile(src, []byte("package main\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := keepDir(user); err == nil || !strings.Contains(err.Error(), "not made by tigris") {
		t.Errorf("a user's package directory: %v", err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("the user's file is gone: %v", err)
	}

	kept := filepath.Join(root, "kept", "example.com", "lib")
	for range 2 {
		dir, err := keepDir(kept)
		if err != nil || dir != kept {
			t.Fatalf("keepDir = %q, %v", dir, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "lib.go"), []byte("package lib\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := keepDir(filepath.Join(kept, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := keepDir(kept); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(kept)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{keptMarker, "sub"}) {
		t.Errorf("kept directory after a rebuild holds %q; want the marker and the subpackage", names)
	}
	if _, err := os.Stat(filepath.Join(sub, keptMarker)); err != nil {
		t.Error(err)
	}
}
