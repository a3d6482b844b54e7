package setups

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// installFiles is a fresh module: no tigris.yaml, go.mod without tigris.
var installFiles = map[string]string{
	"go.mod": "module example.com/fresh\n\ngo 1.22\n",
	"calc/calc.go": `package calc

// Sum adds the squares of 1..n.
func Sum(n int) int {
	s := 0
	for i := 1; i <= n; i++ {
		s += i * i
	}
	for i := 0; i < n; i++ {
		s -= 0
	}
	return s
}
`,
	"calc/calc_test.go": `package calc

import "testing"

func TestSum(t *testing.T) {
	if Sum(3) != 14 {
		t.Fatal(Sum(3))
	}
}
`,
}

// printedCommands returns the lines of tigris init's output that are go
// commands, as printed.
func printedCommands(out string) []string {
	var cmds []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "go ") {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestInstallPathPrintedCommands: in a fresh module, tigris init runs and
// prints the commands that require the runtime; typed verbatim in a second
// fresh module (after tigris init --no-get wrote tigris.yaml) they do the same,
// an instrumented go test passes right after them (no go mod tidy between),
// and the module keeps its go line through go mod tidy. Both for a
// development build (a replace to this checkout) and for a released version,
// which a module proxy (a file:// one here) serves.
func TestInstallPathPrintedCommands(t *testing.T) {
	itest.RequireGo(t)
	t.Run("checkout", func(t *testing.T) {
		// No flags: what a tigris built in a checkout prints by itself (it
		// finds its checkout through the path the compiler recorded).
		cmds := checkInstall(t, nil)
		if want := "=" + filepath.Join(itest.RepoRoot, "runtime"); !strings.Contains(strings.Join(cmds, "\n"), want) {
			t.Errorf("the printed commands do not replace the runtime with this checkout's (%s):\n%s", want, strings.Join(cmds, "\n"))
		}
	})
	t.Run("release", func(t *testing.T) {
		// A version named by the runtime's content: the module cache keeps
		// what it downloaded, and a fixed version would serve an older runtime
		// to a later run.
		version := "v0.9.0-test." + runtimeDigest(t)
		proxy := runtimeProxy(t, version)
		env := []string{"GOPROXY=file://" + filepath.ToSlash(proxy), "GOSUMDB=off", "GOFLAGS="}
		checkInstall(t, env, "--runtime-version", version)
	})
}

// checkInstall runs tigris init with flags in a fresh module, types the go
// commands it printed in a second one, and builds and tests both
// instrumented; it returns the commands.
func checkInstall(t *testing.T, env []string, flags ...string) []string {
	t.Helper()
	first := itest.NewModule(t, installFiles)
	out := itest.Tigris(t, first, env, append([]string{"init"}, flags...)...)
	cmds := printedCommands(out)
	if len(cmds) == 0 {
		t.Fatalf("tigris init printed no go command:\n%s", out)
	}
	second := itest.NewModule(t, installFiles)
	itest.Tigris(t, second, env, "init", "--no-get")
	for _, c := range cmds {
		if out, code := itest.Run(t, second, env, "/bin/sh", "-c", c); code != 0 {
			t.Fatalf("the printed command %q fails typed by hand:\n%s", c, out)
		}
	}
	// init writes tigris_runtime.go only with the go.mod step: add it as init would.
	data, err := os.ReadFile(filepath.Join(first, "tigris_runtime.go"))
	if err != nil {
		t.Fatal(err)
	}
	itest.WriteFile(t, filepath.Join(second, "tigris_runtime.go"), string(data))
	// The first instrumented build comes right after the commands, with the
	// go command's default -mod=readonly (itest.Env's -mod=mod would write a
	// missing go.sum entry itself and hide it): nothing in between.
	readonly := append(append([]string{}, env...), "GOFLAGS=")
	for _, dir := range []string{first, second} {
		traces := t.TempDir()
		out, code := itest.Run(t, dir, append(readonly, "TIGRIS_MODE=fine", "TIGRIS_OUT="+filepath.Join(traces, "t.tgr")), itest.TigrisBin, "go", "test", "-count=1", "./...")
		if code != 0 || !strings.Contains(out, "ok  \texample.com/fresh/calc") {
			t.Fatalf("instrumented go test right after the install path (exit %d):\n%s", code, out)
		}
		if n := itest.CountRecords(t, filepath.Join(traces, "t.tgr")); n == 0 {
			t.Errorf("the instrumented test recorded nothing")
		}
		// go mod tidy, which a user runs sooner or later, keeps the runtime
		// (tigris_runtime.go) and the go line.
		if out, code := itest.Run(t, dir, readonly, itest.GoExe, "mod", "tidy"); code != 0 {
			t.Fatalf("go mod tidy after init: exit %d\n%s", code, out)
		}
		mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
		if !strings.Contains(string(mod), "\ngo 1.22\n") || !strings.Contains(string(mod), "github.com/tigrisgo/tigris/runtime") {
			t.Fatalf("go.mod after init and go mod tidy:\n%s", mod)
		}
	}
	return cmds
}

// runtimeDigest is 12 hex digits of a digest of the runtime module's files.
func runtimeDigest(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	src := filepath.Join(itest.RepoRoot, "runtime")
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		h.Write([]byte(rel))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// runtimeProxy writes a file:// module proxy serving this checkout's runtime
// module at version.
func runtimeProxy(t *testing.T, version string) string {
	t.Helper()
	proxy := t.TempDir()
	dir := filepath.Join(proxy, "github.com", "tigrisgo", "tigris", "runtime", "@v")
	src := filepath.Join(itest.RepoRoot, "runtime")
	mod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	prefix := "github.com/tigrisgo/tigris/runtime@" + version + "/"
	err = filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		w, err := zw.Create(prefix + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	itest.WriteFile(t, filepath.Join(dir, "list"), version+"\n")
	itest.WriteFile(t, filepath.Join(dir, version+".info"), `{"Version":"`+version+`","Time":"2026-11-01T00:00:00Z"}`)
	itest.WriteFile(t, filepath.Join(dir, version+".mod"), string(mod))
	itest.WriteFile(t, filepath.Join(dir, version+".zip"), buf.String())
	return proxy
}
