package setups

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/setup"
)

// Build setups users' CI jobs have (issue 10; ../shared/REFERENCES.md lists
// what broke for the peer tools). Every test uses itest.ShopConfig, the config of the
// instrumented tests, so they share its compiler fingerprint and the standard
// library is compiled once for all of them; every one checks that the build
// left every file of the module as it was (tigris never edits a user file),
// with all outputs (binaries, traces) written outside the module.

// treeState records every file under a directory: contents and mtime.
type treeState map[string]fileState

type fileState struct {
	sum   [32]byte
	mtime time.Time
	mode  fs.FileMode
}

func snapshot(t *testing.T, dir string) treeState {
	t.Helper()
	st := treeState{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		st[filepath.ToSlash(rel)] = fileState{sha256.Sum256(data), fi.ModTime(), fi.Mode()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// checkUntouched fails the test for every file of dir that was changed,
// removed or added since before.
func checkUntouched(t *testing.T, dir string, before treeState) {
	t.Helper()
	after := snapshot(t, dir)
	var problems []string
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			problems = append(problems, "removed "+name)
		case a != b:
			problems = append(problems, "changed "+name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			problems = append(problems, "added "+name)
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		t.Errorf("the build touched the module's files:\n%s", strings.Join(problems, "\n"))
	}
}

// tracePackages counts the fine records of a trace file by package.
func tracePackages(t *testing.T, path string) map[string]int {
	return itest.RecordsBy(t, path, func(d *writer.ProbeDef) string { return d.Package })
}

// runTraced runs an instrumented binary in fine mode, checks its output and
// returns the records of its trace by package.
func runTraced(t *testing.T, bin, want string) map[string]int {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "run.tgr")
	if got := itest.RunProgram(t, bin, "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace); got != want {
		t.Fatalf("%s printed\n%s\nwant\n%s", filepath.Base(bin), got, want)
	}
	return tracePackages(t, trace)
}

func wantRecords(t *testing.T, pkgs map[string]int, names ...string) {
	t.Helper()
	for _, n := range names {
		if pkgs[n] == 0 {
			t.Errorf("no fine record of package %s; records by package: %v", n, pkgs)
		}
	}
}

// TestSetupVendor: a module that vendors its dependencies, tigris's runtime
// included (a tools.go that imports it, as docs/config.md says, makes go mod
// vendor copy the monitor and its admin endpoint), builds and tests with -mod=vendor, and nothing in vendor/,
// go.mod or go.sum changes ("inconsistent vendoring" after a tool edited go.mod
// is what users of peer tools hit).
func TestSetupVendor(t *testing.T) {
	files := map[string]string{setup.KeepFile: itest.RuntimeImportFile}
	for k, v := range itest.ShopFiles {
		files[k] = v
	}
	dir := tidyModule(t, files)
	itest.Go(t, dir, nil, "mod", "vendor")
	if !itest.FileExists(filepath.Join(dir, "vendor", "github.com", "tigrisgo", "tigris", "runtime", "monitor", "admin")) {
		t.Fatal("go mod vendor did not copy the monitor's admin endpoint")
	}
	before := snapshot(t, dir)
	vendor := []string{"GOFLAGS=-mod=vendor"}
	out := t.TempDir()
	itest.Tigris(t, dir, vendor, "go", "build", "-o", filepath.Join(out, "inst"), ".")
	wantRecords(t, runTraced(t, filepath.Join(out, "inst"), itest.ShopOutput), "example.com/itest/shop", "example.com/itest")
	test := itest.Tigris(t, dir, vendor, "go", "test", "-count=1", "./shop")
	if !strings.Contains(test, "ok  \texample.com/itest/shop") {
		t.Errorf("tigris go test -mod=vendor:\n%s", test)
	}
	checkUntouched(t, dir, before)
}

// tidyModule writes the module itest.NewModule would, with go.mod as tigris init
// leaves it: the runtime module required (replaced to the checkout), tidied.
func tidyModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := itest.NewModule(t, files)
	itest.Go(t, dir, nil, "mod", "tidy")
	return dir
}

// TestSetupWorkspace: a go.work workspace whose main module uses a library
// module of the workspace; the config at the workspace root instruments both,
// whether the build starts at the root or in the module's directory.
func TestSetupWorkspace(t *testing.T) {
	itest.RequireGo(t)
	ws := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(itest.RepoRoot, "runtime", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"go.work":     "go " + itest.GoDirective + "\n\nuse (\n\t./app\n\t./lib\n)\n",
		"tigris.yaml": itest.ShopConfig,
		"app/go.mod":  "module example.com/itest\n\ngo " + itest.GoDirective + "\n\n" + itest.RuntimeRequire(),
		"app/go.sum":  string(sum),
		"app/main.go": `package main

import (
	"fmt"

	"example.com/itest/lib"
)

func main() { fmt.Println(lib.Twice(21)) }
`,
		"lib/go.mod": "module example.com/itest/lib\n\ngo " + itest.GoDirective + "\n",
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
	} {
		itest.WriteFile(t, filepath.Join(ws, filepath.FromSlash(name)), content)
	}
	before := snapshot(t, ws)
	env := []string{"GOWORK=" + filepath.Join(ws, "go.work"), "GOFLAGS="}
	out := t.TempDir()
	itest.Tigris(t, ws, env, "go", "build", "-o", filepath.Join(out, "root"), "./app")
	wantRecords(t, runTraced(t, filepath.Join(out, "root"), "42\n"), "example.com/itest/lib", "example.com/itest")
	itest.Tigris(t, filepath.Join(ws, "app"), env, "go", "build", "-o", filepath.Join(out, "app"), ".")
	wantRecords(t, runTraced(t, filepath.Join(out, "app"), "42\n"), "example.com/itest/lib")
	checkUntouched(t, ws, before)
}

// TestSetupMainInSubdirectory: the command lives in ./cmd/app; build, run and
// install it from the module root and from its own directory. main.main gets
// its probe under the command's real import path.
func TestSetupMainInSubdirectory(t *testing.T) {
	dir := itest.NewModule(t, map[string]string{
		"tigris.yaml": itest.ShopConfig,
		"cmd/app/main.go": `package main

import (
	"fmt"

	"example.com/itest/internal/greet"
)

func main() { fmt.Println(greet.Hello("cmd")) }
`,
		"internal/greet/greet.go": "package greet\n\n// Hello greets name.\nfunc Hello(name string) string { return \"hello, \" + name }\n",
	})
	before := snapshot(t, dir)
	out := t.TempDir()
	itest.Tigris(t, dir, nil, "go", "build", "-o", filepath.Join(out, "root"), "./cmd/app")
	wantRecords(t, runTraced(t, filepath.Join(out, "root"), "hello, cmd\n"), "example.com/itest/cmd/app", "example.com/itest/internal/greet")
	itest.Tigris(t, filepath.Join(dir, "cmd", "app"), nil, "go", "build", "-o", filepath.Join(out, "sub"), ".")
	wantRecords(t, runTraced(t, filepath.Join(out, "sub"), "hello, cmd\n"), "example.com/itest/cmd/app")
	trace := filepath.Join(out, "run.tgr")
	if got := itest.Tigris(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_OUT=" + trace}, "go", "run", "./cmd/app"); got != "hello, cmd\n" {
		t.Errorf("tigris go run ./cmd/app printed %q", got)
	}
	wantRecords(t, tracePackages(t, trace), "example.com/itest/cmd/app")
	gobin := t.TempDir()
	itest.Tigris(t, dir, []string{"GOBIN=" + gobin}, "go", "install", "./cmd/app")
	wantRecords(t, runTraced(t, filepath.Join(gobin, "app"+itest.ExeSuffix()), "hello, cmd\n"), "example.com/itest/internal/greet")
	checkUntouched(t, dir, before)
}

// TestSetupGlobalGOFLAGS: a CI job sets GOFLAGS='"-toolexec=tigris toolexec"'
// for everything, then, in the instrumented module's directory (go.mod as
// tigris init leaves it, read-only as go builds by default), builds the
// module, go installs an unrelated command at a version (whose module graph
// has no tigris: built plain), runs tigris as a go tool, and go installs
// tigris itself over the binary the go command is running as its toolexec.
func TestSetupGlobalGOFLAGS(t *testing.T) {
	dir := tidyModule(t, itest.ShopFiles)
	bin := t.TempDir() // the job's tigris, on PATH, and its GOBIN
	data, err := os.ReadFile(itest.TigrisBin)
	if err != nil {
		t.Fatal(err)
	}
	itest.WriteFile(t, filepath.Join(bin, filepath.Base(itest.TigrisBin)), string(data))
	if err := os.Chmod(filepath.Join(bin, filepath.Base(itest.TigrisBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		`GOFLAGS="-toolexec=tigris toolexec"`,
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GOBIN=" + bin,
	}
	before := snapshot(t, dir)
	out := t.TempDir()
	itest.Go(t, dir, env, "build", "-o", filepath.Join(out, "inst"), ".")
	wantRecords(t, runTraced(t, filepath.Join(out, "inst"), itest.ShopOutput), "example.com/itest/shop")

	// An unrelated command at a version: outside any module that requires
	// tigris, so its main gets no shutdown hook and it links no monitor.
	itest.Go(t, dir, env, "install", "golang.org/x/tools/cmd/stringer@"+requiredVersion(t, "golang.org/x/tools"))
	stringer := filepath.Join(bin, "stringer"+itest.ExeSuffix())
	if out, code := itest.Run(t, dir, nil, stringer, "-help"); !strings.Contains(out, "Usage of stringer") {
		t.Errorf("the installed stringer does not run (exit %d):\n%s", code, out)
	}
	if b, err := os.ReadFile(stringer); err != nil || bytes.Contains(b, []byte("tigrisgo/tigris/monitor")) {
		t.Errorf("the unrelated command links the monitor (read error %v)", err)
	}

	// tigris itself, built through the toolexec from the checkout (tigris's own
	// packages are never instrumented), replacing the binary that runs as the
	// toolexec.
	itest.Go(t, itest.RepoRoot, env, "install", "./cmd/tigris")
	if out, code := itest.Run(t, dir, nil, filepath.Join(bin, filepath.Base(itest.TigrisBin)), "version"); code != 0 || !strings.Contains(out, "tigris") {
		t.Errorf("the reinstalled tigris does not run (exit %d):\n%s", code, out)
	}
	checkUntouched(t, dir, before)
}

// requiredVersion is the version of module path in tigris's own go.mod (so
// that it is in the module cache).
func requiredVersion(t *testing.T, path string) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(itest.RepoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("tigris's go.mod does not require %s", path)
	return ""
}

// TestSetupVersionMismatch: the module requires a tigris runtime that is not
// the one this tigris binary generates code for (here: an older one). The build stops at the first
// instrumented package with a message naming both sides and the two ways out,
// not with compile errors in generated code or a link error.
func TestSetupVersionMismatch(t *testing.T) {
	itest.RequireGo(t)
	old := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(itest.RepoRoot, "runtime", name))
		if err != nil {
			t.Fatal(err)
		}
		itest.WriteFile(t, filepath.Join(old, name), string(data))
	}
	// The runtime of an older tigris: CodeVersion one lower.
	codeVersion := regexp.MustCompile(`(?m)^const CodeVersion = [0-9]+$`)
	for _, d := range []string{"monitor", "monitor/admin", "monitor/analyzer", "monitor/atexit", "settings", "writer", "pointcut", "dsl", "internal/num"} {
		files, _ := filepath.Glob(filepath.Join(itest.RepoRoot, "runtime", filepath.FromSlash(d), "*"))
		for _, f := range files {
			if fi, err := os.Stat(f); err != nil || fi.IsDir() || strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if d == "monitor" {
				data = codeVersion.ReplaceAll(data, []byte(fmt.Sprintf("const CodeVersion = %d", monitor.CodeVersion-1)))
			}
			itest.WriteFile(t, filepath.Join(old, filepath.FromSlash(d), filepath.Base(f)), string(data))
		}
	}
	sum, err := os.ReadFile(filepath.Join(itest.RepoRoot, "runtime", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := itest.NewModule(t, map[string]string{
		"go.mod": "module example.com/itest\n\ngo " + itest.GoDirective + "\n\nrequire github.com/tigrisgo/tigris/runtime v0.9.0\n\n" +
			"replace github.com/tigrisgo/tigris/runtime v0.9.0 => " + old + "\n",
		"go.sum":      string(sum),
		"tigris.yaml": itest.ShopConfig,
		// No imports: the build reaches the instrumented package after
		// compiling only package runtime's dependencies.
		"lib/lib.go": "package lib\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
		"main.go":    "package main\n\nimport \"example.com/itest/lib\"\n\nfunc main() { println(lib.Twice(1)) }\n",
	})
	before := snapshot(t, dir)
	out, code := itest.Run(t, dir, nil, itest.TigrisBin, "go", "build", "-o", filepath.Join(t.TempDir(), "inst"), ".")
	if code == 0 {
		t.Fatalf("the build succeeded against a monitor of another version:\n%s", out)
	}
	for _, want := range []string{
		"version mismatch", fmt.Sprintf("generates code for monitor runtime version %d", monitor.CodeVersion),
		// (the go command shortens the path of the replacement relative to its directory)
		"github.com/tigrisgo/tigris/runtime v0.9.0 => ", filepath.Base(old), fmt.Sprintf("monitor runtime is version %d", monitor.CodeVersion-1),
		"use the tigris that matches the module", "run tigris init in the module",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the message lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"undefined:", "fingerprint mismatch", "relocation target"} {
		if strings.Contains(out, bad) {
			t.Errorf("the build failed with %q instead of the version check:\n%s", bad, out)
		}
	}
	checkUntouched(t, dir, before)
}

// TestSetupTrimpathTagsLdflags: -trimpath, a build tag and -ldflags -X
// together. The tag selects a file that gets probes, -X sets a variable of
// the instrumented main package, and no absolute path of the module (which
// the rewritten files' //line directives name) survives -trimpath.
func TestSetupTrimpathTagsLdflags(t *testing.T) {
	dir := itest.NewModule(t, map[string]string{
		"tigris.yaml": itest.ShopConfig,
		"main.go": `package main

import "fmt"

var v = "0"

func main() { fmt.Println("v="+v, flavor()) }
`,
		"plain.go":  "//go:build !x\n\npackage main\n\nfunc flavor() string { return \"plain\" }\n",
		"tagged.go": "//go:build x\n\npackage main\n\nfunc flavor() string { return \"tagged\" }\n",
	})
	before := snapshot(t, dir)
	bin := filepath.Join(t.TempDir(), "inst")
	itest.Tigris(t, dir, nil, "go", "build", "-trimpath", "-tags", "x", "-ldflags", "-X main.v=1", "-o", bin, ".")
	pkgs := runTraced(t, bin, "v=1 tagged\n")
	wantRecords(t, pkgs, "example.com/itest")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(dir)) {
		t.Errorf("the -trimpath binary contains the module's directory %s", dir)
	}
	if !bytes.Contains(b, []byte("example.com/itest/tagged.go")) {
		t.Error("the binary's probe table does not name the tagged file")
	}
	checkUntouched(t, dir, before)
}

// TestInstrumentedRace: the instrumented tests pass under the race detector,
// with probes in fine mode and goroutines calling them concurrently.
func TestInstrumentedRace(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	out := itest.Tigris(t, dir, []string{"TIGRIS_MODE=fine", "TIGRIS_WRITER=null"}, "go", "test", "-race", "-count=1", "./shop")
	if !strings.Contains(out, "ok  \texample.com/itest/shop") {
		t.Errorf("go test -race through tigris:\n%s", out)
	}
}

// TestCrossBuild: an instrumented cross build (no cgo) links; the runtime patch
// and the monitor's assembly-free linknames hold on another OS and architecture.
func TestCrossBuild(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	env := []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0"}
	itest.Tigris(t, dir, env, "go", "build", "-trimpath", "-o", "inst-darwin", ".")
	b, err := os.ReadFile(filepath.Join(dir, "inst-darwin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte{0xcf, 0xfa, 0xed, 0xfe}) { // 64-bit Mach-O
		t.Errorf("not a Mach-O binary: % x", b[:4])
	}
	if !bytes.Contains(b, []byte("example.com/itest/shop.Fib")) {
		t.Error("the cross-built binary carries no probe metadata")
	}
}

// TestToolchainMismatch: a tigris built with one Go release, used as the
// toolexec of a build on the other supported release, stops at the first
// instrumented compile with one line that says what to do, instead of a
// panic in the export-data reader. The other release comes through the module
// proxy (GOTOOLCHAIN), as in CI.
func TestToolchainMismatch(t *testing.T) {
	itest.RequireGo(t)
	other := "go1.27.3"
	if strings.HasPrefix(runtime.Version(), "go1.27") {
		other = "go1.26.8"
	}
	dir := itest.NewModule(t, itest.ShopFiles)
	out, code := itest.Run(t, dir, []string{"GOTOOLCHAIN=" + other}, itest.TigrisBin, "go", "build", "-o", filepath.Join(t.TempDir(), "app"), ".")
	if code == 0 {
		t.Fatalf("the build under %s succeeded with a tigris built by %s:\n%s", other, runtime.Version(), out)
	}
	if strings.Contains(out, "go: downloading "+other) && strings.Contains(out, "toolchain not available") || strings.Contains(out, "go: download "+other) {
		t.Skipf("the %s toolchain cannot be downloaded here:\n%s", other, out)
	}
	want := "tigris was built with " + runtime.Version() + ", but this build compiles with " + other
	if !strings.Contains(out, want) || strings.Contains(out, "panic:") {
		t.Errorf("want the one-line toolchain message (%q), got:\n%s", want, out)
	}
}
