package itest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	pathpkg "path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/setup"
)

var (
	RepoRoot    string // the tigris module root
	GoExe       string // the go command, "" when missing
	TigrisBin   string // the tigris binary built by TestMain
	GoDirective string // the go line of the repo's go.mod ("1.26.8")
	GoCache     string // the shared GOCACHE
	UserCache   string // XDG_CACHE_HOME for tigris's own caches
	setupErr    error  // why the harness could not be set up
)

// Main sets the harness up and runs the tests; a package's TestMain calls
// os.Exit(itest.Main(m)).
func Main(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run() // every test skips
	}
	var err error
	if GoExe, err = exec.LookPath("go"); err != nil {
		GoExe = ""
		return m.Run() // every test skips
	}
	tmp, err := os.MkdirTemp("", "tigris-itest-bin-")
	if err != nil {
		setupErr = err
		return m.Run()
	}
	defer os.RemoveAll(tmp)
	setupErr = prepare(tmp)
	return m.Run()
}

func prepare(tmp string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	for RepoRoot = wd; !FileExists(filepath.Join(RepoRoot, "go.mod")); {
		parent := filepath.Dir(RepoRoot)
		if parent == RepoRoot {
			return errors.New("no go.mod above the integration directory")
		}
		RepoRoot = parent
	}
	mod, err := os.ReadFile(filepath.Join(RepoRoot, "go.mod"))
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			GoDirective = strings.TrimSpace(v)
		}
	}
	if GoDirective == "" {
		return errors.New("the repo's go.mod has no go line")
	}
	out, err := exec.Command(GoExe, "env", "GOCACHE").Output()
	if GoCache = strings.TrimSpace(string(out)); err != nil || GoCache == "" || GoCache == "off" {
		GoCache = filepath.Join(os.TempDir(), "tigris-itest-gocache")
	}
	UserCache = filepath.Join(os.TempDir(), "tigris-itest-cache")
	TigrisBin = filepath.Join(tmp, "tigris"+ExeSuffix())
	cmd := exec.Command(GoExe, "build", "-o", TigrisBin, "./cmd/tigris")
	cmd.Dir = RepoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building tigris: %v\n%s", err, out)
	}
	return nil
}

// RequireGo skips the test when the harness cannot run go builds, and fails it
// when the harness could not be set up.
func RequireGo(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds programs with the go command; skipped in -short mode")
	}
	if GoExe == "" {
		t.Skip("go command not found")
	}
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

// Env is the environment of every command the tests run: the inherited one
// without anything that would make the build depend on the developer's setup,
// plus the shared caches and extra (KEY=value entries, later ones win).
func Env(extra ...string) []string {
	drop := func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GOFLAGS", "GOCACHE", "GOWORK", "GOTOOLCHAIN", "XDG_CACHE_HOME", "TOOLEXEC_IMPORTPATH":
			return true
		}
		return strings.HasPrefix(name, "TIGRIS_")
	}
	var env []string
	for _, kv := range os.Environ() {
		if !drop(kv) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"GOFLAGS=-mod=mod",
		"GOCACHE="+GoCache,
		"GOWORK=off",
		// The toolchain that runs the tests (CI also runs them under the
		// other supported release, GOTOOLCHAIN=go1.27.x).
		"GOTOOLCHAIN="+runtime.Version(),
		"XDG_CACHE_HOME="+UserCache,
	)
	return append(env, extra...)
}

// NewModule writes a throwaway module example.com/itest with files (paths
// relative to the module root, "/"-separated) and returns its directory. Its
// go.mod requires tigris through a replace to the repo root unless files has
// its own go.mod.
func NewModule(t *testing.T, files map[string]string) string {
	t.Helper()
	return NewModuleAt(t, "example.com/itest", files)
}

// NewModuleAt is NewModule for a module with another path.
func NewModuleAt(t *testing.T, path string, files map[string]string) string {
	t.Helper()
	RequireGo(t)
	dir := t.TempDir()
	if _, ok := files["go.mod"]; !ok {
		WriteFile(t, filepath.Join(dir, "go.mod"), fmt.Sprintf("module %s\n\ngo %s\n\n%s", path, GoDirective, RuntimeRequire()))
		WriteRuntimeSum(t, dir)
	}
	for name, content := range files {
		WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	return dir
}

// RuntimeModule is the module instrumented binaries link.
const RuntimeModule = "github.com/tigrisgo/tigris/runtime"

// RuntimeRequire is the go.mod text that makes a test module link the runtime
// module of this checkout: a require and a replace to the repo's runtime
// directory, what `tigris init --dev` writes.
func RuntimeRequire() string {
	return fmt.Sprintf("require %s v0.0.0\n\nreplace %s => %s\n", RuntimeModule, RuntimeModule, filepath.Join(RepoRoot, "runtime"))
}

// RuntimeImportFile is the tigris_runtime.go tigris init writes: it makes go
// mod tidy keep the runtime and go mod vendor copy it.
var RuntimeImportFile = setup.KeepSource("main")

// WriteRuntimeSum writes a go.sum with what the runtime module needs into dir.
func WriteRuntimeSum(t *testing.T, dir string) {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(RepoRoot, "runtime", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "go.sum"), string(sum))
}

func WriteFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
}

// Run runs exe with args in dir with Env(env...) and returns its combined
// output and exit status (-1 when it could not be started). It logs nothing.
func Run(t *testing.T, dir string, env []string, exe string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = Env(env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	default:
		return fmt.Sprintf("%s\n(starting %s: %v)", out.String(), exe, err), -1
	}
}

// Go runs the go command and returns its output; it fails the test, printing
// the output, when go fails.
func Go(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, code := Run(t, dir, env, GoExe, args...)
	if code != 0 {
		t.Fatalf("go %s: exit status %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// Tigris runs the tigris binary and returns its output; it fails the test,
// printing the output, when tigris fails.
func Tigris(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	out, code := Run(t, dir, env, TigrisBin, args...)
	if code != 0 {
		t.Fatalf("tigris %s: exit status %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// ToolexecFlag is the -toolexec flag that runs the test's tigris binary.
func ToolexecFlag() string {
	bin := TigrisBin
	if strings.ContainsAny(bin, " '\"") {
		bin = "'" + bin + "'"
	}
	return "-toolexec=" + bin + " toolexec"
}

// GoTool returns the path of a tool of the go command's toolchain.
func GoTool(t *testing.T, name string) string {
	t.Helper()
	dir := strings.TrimSpace(Go(t, "", nil, "env", "GOTOOLDIR"))
	return filepath.Join(dir, name+ExeSuffix())
}

// RunProgram runs a built binary and returns its output; it fails the test when
// the program fails.
func RunProgram(t *testing.T, bin string, env ...string) string {
	t.Helper()
	out, code := Run(t, filepath.Dir(bin), env, bin)
	if code != 0 {
		t.Fatalf("%s: exit status %d\n%s", bin, code, out)
	}
	return out
}

func ExeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

func FileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// EachRecord calls f with every fine record of the trace file at path and
// its probe's definition (nil when the trace has none).
func EachRecord(t *testing.T, path string, f func(def *writer.ProbeDef, r *writer.Record)) {
	t.Helper()
	EachItem(t, path, func(r *writer.Reader, it *writer.Item) {
		if it.Kind == writer.KindRecord {
			f(r.Probe(it.Record.Probe), &it.Record)
		}
	})
}

// EachItem calls f with every item of the trace file at path (records,
// links, remote parents, losses) and the reader, which knows the probes
// defined so far.
func EachItem(t *testing.T, path string, f func(r *writer.Reader, it *writer.Item)) {
	t.Helper()
	r, err := writer.Open(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	defer r.Close()
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f(r, &it)
	}
}

// CountRecords returns how many records the trace file at path holds.
func CountRecords(t *testing.T, path string) int {
	t.Helper()
	n := 0
	EachRecord(t, path, func(*writer.ProbeDef, *writer.Record) { n++ })
	return n
}

// RecordsBy counts the fine records of a trace file by key(probe definition).
func RecordsBy(t *testing.T, path string, key func(*writer.ProbeDef) string) map[string]int {
	t.Helper()
	n := map[string]int{}
	EachRecord(t, path, func(def *writer.ProbeDef, _ *writer.Record) {
		if def != nil {
			n[key(def)]++
		}
	})
	return n
}

// CopyModule fetches module path@version through the module proxy (with
// Env(env...)) and copies its files, writable, into a new directory named
// after the module's last element: the module as a user who cloned it has it.
func CopyModule(t *testing.T, env []string, path, version string) string {
	t.Helper()
	out := Go(t, t.TempDir(), env, "mod", "download", "-json", path+"@"+version)
	var info struct{ Dir string }
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v\n%s", path, version, err, out)
	}
	dir := filepath.Join(t.TempDir(), pathpkg.Base(path))
	err := filepath.WalkDir(info.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(info.Dir, p)
		target := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !FileExists(filepath.Join(dir, "go.mod")) {
		t.Fatalf("%s@%s has no go.mod: a user would run go mod init first", path, version)
	}
	return dir
}

// GoLine returns the go line of the module in dir, "" when it has none.
func GoLine(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
