package invisible

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/setup"
)

// initModule writes a module with files and go.mod's go line goLine ("" for
// none), then runs `tigris init` in it as a new user would (with this
// checkout's runtime) and returns its directory. go.mod's go line must survive
// init and go mod tidy; a missing one must become the go 1.16 the go command
// reads it as.
func initModule(t *testing.T, goLine string, files map[string]string) string {
	t.Helper()
	itest.RequireGo(t)
	dir := t.TempDir()
	gomod := "module example.com/fixture\n"
	if goLine != "" {
		gomod += "\ngo " + goLine + "\n"
	}
	itest.WriteFile(t, filepath.Join(dir, "go.mod"), gomod)
	for name, content := range files {
		itest.WriteFile(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
	if !tigrisInit(t, dir, goLine) {
		t.FailNow()
	}
	return dir
}

// tigrisInit runs tigris init in dir as a user would, then go mod tidy, and
// reports whether the go line (before: the line before init, "" for none) is
// still the module's: unchanged, or for none the go 1.16 the go command reads
// it as. It reports a moved line as an error.
func tigrisInit(t *testing.T, dir, before string) bool {
	t.Helper()
	itest.Tigris(t, dir, nil, "init", "--runtime", filepath.Join(itest.RepoRoot, "runtime"))
	itest.Go(t, dir, nil, "mod", "tidy")
	want := before
	if want == "" {
		want = setup.ImpliedGoLine
	}
	if got := itest.GoLine(t, dir); got != want {
		t.Errorf("the go line is %q after tigris init and go mod tidy; it was %q", got, before)
		return false
	}
	return true
}

// sumSource is a file of package pkg with Sum, a function the compiler does
// not inline (its cost, 98, is above the inlining budget of 80): it gets a
// probe.
func sumSource(pkg string) string {
	return "package " + pkg + `

// Sum adds the numbers, skipping negative ones and capping large ones.
func Sum(xs []int) int {
	s := 0
	for _, x := range xs {
		switch {
		case x < 0:
			continue
		case x > 1<<20:
			s += 1 << 20
		default:
			s += x
		}
	}
	for i := len(xs) - 1; i >= 0; i-- {
		s += 0 * xs[i]
	}
	for i := 0; i < len(xs); i += 2 {
		s -= 0 * xs[i]
	}
	for i := 1; i < len(xs); i += 2 {
		s -= 0 * xs[i]
	}
	if s < 0 {
		return 0
	}
	return s
}
`
}

// sameVerdict runs the module's tests plain and through tigris with every
// probe in fine mode, wants both to pass, and wants the instrumented tests to
// have recorded calls (so that something was instrumented). env is added to
// both runs. It returns the fine records by function name.
func sameVerdict(t *testing.T, dir string, env []string, args ...string) map[string]int {
	t.Helper()
	goArgs := append([]string{"test", "-count=1"}, args...)
	plain, code := itest.Run(t, dir, env, itest.GoExe, goArgs...)
	if code != 0 {
		t.Fatalf("the plain tests fail (the fixture is wrong):\n%s", plain)
	}
	traces := t.TempDir()
	env = append(env, "TIGRIS_MODE=fine", "TIGRIS_OUT="+filepath.Join(traces, "{binary}-{pid}.tgr"))
	out, code := itest.Run(t, dir, env, itest.TigrisBin, append([]string{"go"}, goArgs...)...)
	if code != 0 {
		t.Fatalf("instrumented tests fail where the plain ones pass:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(traces, "*.tgr"))
	byName := map[string]int{}
	for _, f := range files {
		for name, n := range itest.RecordsBy(t, f, func(d *writer.ProbeDef) string { return d.Name }) {
			byName[name] += n
		}
	}
	if len(byName) == 0 {
		t.Errorf("the instrumented tests recorded no call (%d trace files): nothing was instrumented", len(files))
	}
	return byName
}

// oldGoLineFiles are tests that pass only under the language rules of an old
// go line: vet checks printf calls with a non-constant format only from go
// 1.24 on, and loop variables are per iteration only from go 1.22 on.
var oldGoLineFiles = map[string]string{
	"report/sum.go": sumSource("report"),
	"report/report.go": `package report

import "fmt"

// Logf is a printf-like helper, as many modules have.
func Logf(format string, args ...interface{}) string { return fmt.Sprintf(format, args...) }
`,
	"report/report_test.go": `package report

import "testing"

func TestReport(t *testing.T) {
	msg := Logf("%d items", Sum([]int{1, 2, 3}))
	if msg != "6 items" {
		t.Fatalf(msg) // a non-constant format: vet complains from go 1.24 on
	}
}

func TestLoopVariable(t *testing.T) {
	var fs []func() int
	for i := 0; i < 3; i++ {
		fs = append(fs, func() int { return i })
	}
	if fs[0]() != 3 {
		t.Fatal("loop variables are per iteration: the module's go line is no longer its own")
	}
}
`,
}

// TestOldGoLine: a module declaring go 1.20, one declaring 1.16 (before
// module graph pruning) and one without a go line (read as 1.16) keep their
// language version through tigris init and go mod tidy, and their tests,
// which depend on that version's rules, pass instrumented.
func TestOldGoLine(t *testing.T) {
	for _, line := range []string{"", "1.16", "1.20"} {
		name := line
		if name == "" {
			name = "none"
		}
		t.Run(name, func(t *testing.T) {
			dir := initModule(t, line, oldGoLineFiles)
			before := itest.GoLine(t, dir)
			if n := sameVerdict(t, dir, nil, "./...")["Sum"]; n == 0 {
				t.Error("Sum recorded no call: the fixture's package kept no probe")
			}
			if got := itest.GoLine(t, dir); got != before {
				t.Errorf("go line %s after the instrumented test; want %s", got, before)
			}
		})
	}
}

// allocFiles: an allocation test around a constructor the compiler inlines,
// so that the value it returns stays on the caller's stack.
var allocFiles = map[string]string{
	"buf/buf.go": `package buf

// Buf is a small fixed buffer.
type Buf struct {
	b [64]byte
	n int
}

// New returns an empty Buf. It is inlined, so &Buf{} does not escape.
func New() *Buf { return &Buf{} }

// Write appends p.
func (d *Buf) Write(p []byte) int {
	n := copy(d.b[d.n:], p)
	d.n += n
	return n
}

// Checksum is large enough not to be inlined: it gets a probe.
func Checksum(p []byte) uint32 {
	var h uint32 = 2166136261
	for _, c := range p {
		h ^= uint32(c)
		h *= 16777619
	}
	for i := 0; i < len(p); i += 8 {
		h += uint32(i)
	}
	return h
}
`,
	"buf/buf_test.go": `package buf

import "testing"

func TestAllocs(t *testing.T) {
	b := []byte("hello")
	if n := testing.AllocsPerRun(100, func() {
		d := New()
		d.Write(b)
		_ = Checksum(d.b[:d.n])
	}); n != 0 {
		t.Fatalf("got %v alloc(s); want 0", n)
	}
}
`,
}

// TestAllocsAroundInlinedConstructor: the module's own allocation test passes
// instrumented, because the inlined constructor keeps no probe (the default
// monitor.inlinable: skip), while the larger function does get one. With
// monitor.inlinable: probe the same test fails: the policy is what keeps it.
func TestAllocsAroundInlinedConstructor(t *testing.T) {
	dir := initModule(t, "1.21", allocFiles)
	sameVerdict(t, dir, nil, "./...") // fine mode
	for _, mode := range []string{"off", "coarse"} {
		if out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=" + mode}, itest.TigrisBin, "go", "test", "-count=1", "./..."); code != 0 {
			t.Errorf("the allocation test fails instrumented with probes %s:\n%s", mode, out)
		}
	}
	match := itest.Tigris(t, dir, nil, "match", "-v", "./...")
	for _, want := range []string{"buf.New() ", "the compiler inlines it", "buf.Checksum([]byte) uint32  ["} {
		if !strings.Contains(match, want) {
			t.Errorf("tigris match lacks %q:\n%s", want, match)
		}
	}

	cfg := filepath.Join(dir, "tigris.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probe := strings.Replace(string(data), "monitor:\n", "monitor:\n  inlinable: probe\n", 1)
	itest.WriteFile(t, cfg, probe)
	out, code := itest.Run(t, dir, []string{"TIGRIS_MODE=fine"}, itest.TigrisBin, "go", "test", "-count=1", "./...")
	if code == 0 || !strings.Contains(out, "alloc(s); want 0") {
		t.Errorf("with inlinable: probe the allocation test should fail (the probe stops New's inlining), got exit %d:\n%s", code, out)
	}
}

// pluginFiles: a plugin that imports only the standard library, and a module
// whose instrumented test loads it.
var pluginFiles = map[string]string{
	"plug/plug.go": `package main

import "strings"

// Shout is what the host calls.
func Shout(s string) string { return strings.ToUpper(s) + "!" }
`,
	"host/host.go": `package host

import (
	"fmt"
	"plugin"
)

// Call loads the plugin at path and calls its Shout.
func Call(path, s string) (string, error) {
	p, err := plugin.Open(path)
	if err != nil {
		return "", err
	}
	f, err := p.Lookup("Shout")
	if err != nil {
		return "", err
	}
	shout, ok := f.(func(string) string)
	if !ok {
		return "", fmt.Errorf("Shout has type %T", f)
	}
	return shout(s), nil
}
`,
	"host/host_test.go": `package host

import (
	"os"
	"testing"
)

func TestPlugin(t *testing.T) {
	got, err := Call(os.Getenv("PLUGIN"), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if got != "HI!" {
		t.Fatalf("got %q", got)
	}
}
`,
}

// TestPluginBuiltPlain: a plugin built by a plain go build loads into a test
// binary built through tigris: the standard library is compiled unchanged.
func TestPluginBuiltPlain(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("plugins need linux or darwin")
	}
	dir := initModule(t, "1.21", pluginFiles)
	plug := filepath.Join(t.TempDir(), "plug.so")
	if out, code := itest.Run(t, dir, []string{"CGO_ENABLED=1"}, itest.GoExe, "build", "-buildmode=plugin", "-o", plug, "./plug"); code != 0 {
		t.Fatalf("building the plugin:\n%s", out)
	}
	sameVerdict(t, dir, []string{"CGO_ENABLED=1", "PLUGIN=" + plug}, "./host")
}

// sharedPluginFiles: a plugin that imports a package of the module, which
// the host instruments too.
var sharedPluginFiles = map[string]string{
	"lib/sum.go": sumSource("lib"),
	"plug/plug.go": `package main

import "example.com/fixture/lib"

// Total is what the host calls.
func Total(xs []int) int { return lib.Sum(xs) }
`,
	"host/host.go": `package host

import (
	"fmt"
	"plugin"

	"example.com/fixture/lib"
)

// Call loads the plugin at path and adds its Total to lib.Sum.
func Call(path string, xs []int) (int, error) {
	p, err := plugin.Open(path)
	if err != nil {
		return 0, err
	}
	f, err := p.Lookup("Total")
	if err != nil {
		return 0, err
	}
	total, ok := f.(func([]int) int)
	if !ok {
		return 0, fmt.Errorf("Total has type %T", f)
	}
	return total(xs) + lib.Sum(xs), nil
}
`,
	"host/host_test.go": `package host

import (
	"os"
	"testing"
)

func TestPlugin(t *testing.T) {
	got, err := Call(os.Getenv("PLUGIN"), []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got != 12 {
		t.Fatalf("got %d", got)
	}
}
`,
}

// TestPluginSharingInstrumentedPackage: a plugin that imports a package the
// program instruments loads when it is built through tigris go too, and the
// calls of the shared package from both are recorded (docs/compatibility.md,
// Known limits: built plain, the loader refuses it, as it refuses any plugin
// built from other sources).
func TestPluginSharingInstrumentedPackage(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("plugins need linux or darwin")
	}
	dir := initModule(t, "1.21", sharedPluginFiles)
	env := []string{"CGO_ENABLED=1"}
	plain, inst := filepath.Join(t.TempDir(), "plain.so"), filepath.Join(t.TempDir(), "inst.so")
	if out, code := itest.Run(t, dir, env, itest.GoExe, "build", "-buildmode=plugin", "-o", plain, "./plug"); code != 0 {
		t.Fatalf("building the plugin:\n%s", out)
	}
	if out, code := itest.Run(t, dir, env, itest.TigrisBin, "go", "build", "-buildmode=plugin", "-o", inst, "./plug"); code != 0 {
		t.Fatalf("building the plugin through tigris:\n%s", out)
	}
	if out, code := itest.Run(t, dir, append(env, "PLUGIN="+plain), itest.GoExe, "test", "-count=1", "./host"); code != 0 {
		t.Fatalf("the plain tests fail (the fixture is wrong):\n%s", out)
	}
	trace := filepath.Join(t.TempDir(), "t.tgr")
	out, code := itest.Run(t, dir, append(env, "PLUGIN="+inst, "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace), itest.TigrisBin, "go", "test", "-count=1", "./host")
	if code != 0 {
		t.Fatalf("an instrumented program does not load a plugin built through tigris go:\n%s", out)
	}
	if n := itest.RecordsBy(t, trace, func(d *writer.ProbeDef) string { return d.Name }); n["Sum"] != 2 {
		t.Errorf("records by function %v; want lib.Sum twice (from the plugin and from the host)", n)
	}
}

// leakFiles: tests that fail when a goroutine is left running at their end,
// checked with goleak as many modules do (once for the test binary in
// TestMain, and in a test). A monitor goroutine that waits between bursts of
// work (a writer goroutine, an analysis loop) fails them.
var leakFiles = map[string]string{
	"work/work.go": sumSource("work"),
	"work/work_test.go": `package work

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSum(t *testing.T) {
	defer goleak.VerifyNone(t)
	xs := make([]int, 100)
	for i := range xs {
		xs[i] = i
	}
	for i := 0; i < 100000; i++ { // enough fine records to wake the trace writer
		if Sum(xs) != 4950 {
			t.Fatal("wrong sum")
		}
	}
}
`,
}

// TestNoGoroutineLeft: a module whose tests check for leaked goroutines with
// goleak passes instrumented, with probes coarse (the default) and fine, and
// with the analyzer on: no goroutine of the monitor outlives its work.
func TestNoGoroutineLeft(t *testing.T) {
	dir := initModule(t, "1.21", leakFiles)
	itest.Go(t, dir, nil, "get", "go.uber.org/goleak@v1.3.0")
	itest.Go(t, dir, nil, "mod", "tidy")
	for _, env := range [][]string{nil, {"TIGRIS_ANALYSIS=on", "TIGRIS_INTERVAL=1s"}} {
		// 100,000 fine records of Sum wake the trace writer's goroutine
		// many times; it must be gone when goleak looks.
		if n := sameVerdict(t, dir, env, "./...")["Sum"]; n < 100000 {
			t.Errorf("Sum recorded %d times; want 100000", n)
		}
		if out, code := itest.Run(t, dir, env, itest.TigrisBin, "go", "test", "-count=1", "./..."); code != 0 {
			t.Errorf("instrumented tests with the default mode (coarse), env %q, fail:\n%s", env, out)
		}
	}
}
