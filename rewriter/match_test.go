package rewriter

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
)

func TestListMatches(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a/a.go"), `package a

import _ "unsafe"

func Exported() error { return nil }

func unexported() {}

func (T) Method() {}

type T struct{}

//go:nosplit
func Fast() {}

func init() {}
`)
	writeFile(t, filepath.Join(dir, "a/a_test.go"), "package a\n\nfunc helper() {}\n")
	writeFile(t, filepath.Join(dir, "b/b.go"), "package b\n\nfunc Other() {}\n")
	cfg, err := config.Parse("tigris.yaml", []byte(`version: 1
monitor:
  include: ["within(example.com/m/a)"]
  exclude: ["execution(* *.unexported(..))"]
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}, Tests: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rep.Matches {
		s := m.Signature.Name
		if m.Skipped != "" {
			s += " (" + m.Skipped + ")"
		}
		got = append(got, s)
	}
	in := " (" + InlinedReason + ")"
	want := "Exported" + in + " Method" + in + " Fast (marked //go:nosplit) init (init and blank functions are not callable) helper" + in
	if strings.Join(got, " ") != want {
		t.Errorf("matches %q, want %q", strings.Join(got, " "), want)
	}
	if rep.Matches[0].Pos.Line != 5 || rep.Matches[0].Pos.Column != 6 {
		t.Errorf("Exported at %v, want line 5 column 6", rep.Matches[0].Pos)
	}
}

func TestListMatchesReportsPackageErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a.go"), "package m\n\nvar x int = \"s\"\n")
	cfg, err := config.Parse("tigris.yaml", []byte("version: 1\nmonitor:\n  include: [\"within(example.com/m)\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}})
	if err == nil || !strings.Contains(err.Error(), "a.go:3:13") {
		t.Errorf("error %v; want one naming a.go:3:13", err)
	}
}

// TestListMatchesMainPackage: the package pattern main selects a command's
// package, which the go command names by its import path (docs/pointcuts.md).
func TestListMatchesMainPackage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "cmd/server/main.go"), "package main\n\nfunc main() { run() }\n\nfunc run() {}\n")
	writeFile(t, filepath.Join(dir, "lib/lib.go"), "package lib\n\nfunc Run() {}\n")
	rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"execution(* main.*(..))\"]\n")
	var got []string
	for _, m := range rep.Matches {
		got = append(got, m.Signature.Package+"."+m.Signature.Name)
	}
	if want := "example.com/m/cmd/server.main example.com/m/cmd/server.run"; strings.Join(got, " ") != want {
		t.Errorf("matches %q, want %q", strings.Join(got, " "), want)
	}
}

// TestListMatchesInlinableProbe: with monitor.inlinable: probe nothing is
// skipped for being inlined.
func TestListMatchesInlinableProbe(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a/a.go"), "package a\n\nfunc Small() int { return 1 }\n")
	rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"within(example.com/m/a)\"]\n  inlinable: probe\n")
	if len(rep.Matches) != 1 || rep.Matches[0].Skipped != "" {
		t.Errorf("matches %+v; want Small with a probe", rep.Matches)
	}
}

func TestParseInlining(t *testing.T) {
	out := "# example.com/m/a\n" +
		"./a/a.go:5:6: can inline Exported with cost 2 as: func() error { return nil }\n" +
		"a/a.go:9:7: can inline T.Method with cost 0 as: method(T) func() {  }\n" +
		"/abs/a/b.go:12:10: can inline (*T).Find.func1 with cost 4 as: func() { }\n" +
		"./a/a.go:7:2: x escapes to heap\n" +
		// The wrappers of a deferred and a go call on a function's first line.
		"./a/d.go:3:40: can inline Locked.deferwrap1 with cost 2 as: func() { (*sync.Mutex).Unlock(mu) }\n" +
		"./a/d.go:4:30: can inline Spawn.gowrap1 with cost 2 as: func() { work() }\n" +
		// A generic function whose body is too complex: only the wrappers of
		// its instantiations inline, not the shape function with the body.
		"./a/g.go:17:6: can inline Big[int]\n" +
		"./a/g.go:7:6: can inline (*Tree[string,int]).Put\n" +
		"./a/g.go:8:6: can inline (*Tree[struct { x int },int]).Get\n" +
		// One whose body inlines: the shape function is listed too.
		"./a/g.go:15:6: can inline (*Tree[go.shape.string,go.shape.int]).Len\n" +
		"./a/g.go:15:6: can inline (*Tree[string,int]).Len\n" +
		"./a/g.go:20:6: can inline Min[go.shape.struct { x int }]\n" +
		// -m=2's sizes of bodies too complex to inline, and inlined calls.
		"./a/s.go:18:6: cannot inline Skip: function too complex: cost 91 exceeds budget 80\n" +
		"./a/s.go:30:6: cannot inline Big[go.shape.int]: function too complex: cost 140 exceeds budget 80\n" +
		"./a/s.go:30:6: cannot inline Big[go.shape.string]: function too complex: cost 150 exceeds budget 80\n" +
		"./a/s.go:40:6: cannot inline (*T).Find.func1: function too complex: cost 99 exceeds budget 80\n" +
		"./a/s.go:22:12: inlining call to slow\n"
	res, other := parseInlining(out)
	if want := map[string]int{"s.go:18": 91, "s.go:30": 150}; !maps.Equal(res.Size, want) {
		t.Errorf("sizes %v, want %v", res.Size, want)
	}
	if !res.Calls["s.go:22:12"] || len(res.Calls) != 1 {
		t.Errorf("inlined calls %v, want s.go:22:12", res.Calls)
	}
	inl := res.Inlined
	if !inl["a.go:5"] || !inl["a.go:9"] || inl["b.go:12"] || !inl["g.go:15"] || !inl["g.go:20"] || len(inl) != 4 || other {
		t.Errorf("parseInlining = %v, other %v", inl, other)
	}
	if _, other := parseInlining(out + "warning: something else\n"); !other {
		t.Error("a line that is no diagnostic was not noticed")
	}
}

// TestListMatchesInlinedBesideCommands: functions the compiler inlines are
// found in libraries and commands alike, also when a module has commands
// with the same name and packages with the same last element (go build -o DIR
// would build only the commands, go test -c -o DIR names binaries after it).
// matchModule writes the module example.com/m of files (path, content, ...)
// into a new directory and returns it with the config of include.
func matchModule(t *testing.T, include string, files ...string) (string, *config.Config) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	for i := 0; i+1 < len(files); i += 2 {
		writeFile(t, filepath.Join(dir, files[i]), files[i+1])
	}
	cfg, err := config.Parse("tigris.yaml", []byte(fmt.Sprintf("version: 1\nmonitor:\n  include: [%q]\n", include)))
	if err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

func TestListMatchesInlinedBesideCommands(t *testing.T) {
	dir, cfg := matchModule(t, "execution(* example.com/m/...*(..)) || execution(* main.small(..))",
		"cmd/a/server/main.go", "package main\n\nfunc main() { println(small()) }\n\nfunc small() int { return 1 }\n",
		"cmd/b/server/main.go", "package main\n\nfunc main() { println(small()) }\n\nfunc small() int { return 2 }\n",
		"lib/util/util.go", "package util\n\nfunc Small() int { return 3 }\n",
		"other/util/util.go", "package util\n\nfunc Small() int { return 4 }\n",
		"other/util/util_test.go", "package util\n\nimport \"testing\"\n\nfunc TestSmall(t *testing.T) { _ = Small() }\n\nfunc helper() int { return 5 }\n")
	for _, tests := range []bool{false, true} {
		rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}, Tests: tests})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range rep.Matches {
			if m.Signature.Name == "main" || m.Signature.Name == "TestSmall" {
				continue
			}
			if m.Skipped != InlinedReason {
				t.Errorf("tests %v: %s.%s at %v: skipped %q; want %q", tests, m.Signature.Package, m.Signature.Name, m.Pos, m.Skipped, InlinedReason)
			}
		}
	}
}

// genericSource has generic functions and methods whose bodies are too
// complex to inline (Put, Big) beside ones whose bodies inline (Len, Min),
// each instantiated in the package, which is where the compiler reports
// them.
const genericSource = `package g

import "fmt"

type Tree[K comparable, V any] struct {
	m map[K]V
	n int
}

func (t *Tree[K, V]) Put(k K, v V) {
	if t.m == nil {
		t.m = map[K]V{}
	}
	for i := 0; i < 10; i++ {
		if i == t.n {
			fmt.Println(i, k, v)
		}
	}
	t.m[k] = v
	t.n++
	if t.n > 100 {
		for kk := range t.m {
			delete(t.m, kk)
			fmt.Println(kk)
		}
	}
}

func (t *Tree[K, V]) Len() int { return t.n }

func Big[T any](xs []T) int {
	n := 0
	for i, x := range xs {
		if i%2 == 0 {
			fmt.Println(x)
			n++
		} else {
			fmt.Println(i, x, n)
		}
	}
	switch n {
	case 1:
		fmt.Println(1)
	case 2:
		fmt.Println(2)
	}
	return n
}

func Min[T int | string](a, b T) T {
	if a < b {
		return a
	}
	return b
}

func Use() {
	var t Tree[string, int]
	t.Put("a", 1)
	_ = t.Len()
	Big([]int{1})
	_ = Min(1, 2)
	_ = Min("a", "b")
}
`

// TestListMatchesGenericBodies: a generic function is left without a probe for
// being inlined only when its body inlines. The compiler says "can inline"
// for every instantiation's dictionary wrapper (Big[int]) whatever the body;
// only the shape function (Big[go.shape.int]) speaks for the body.
func TestListMatchesGenericBodies(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "g/g.go"), genericSource)
	rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"within(example.com/m/g)\"]\n")
	want := map[string]string{"Put": "", "Big": "", "Use": "", "Len": InlinedReason, "Min": InlinedReason}
	got := map[string]string{}
	for _, m := range rep.Matches {
		got[m.Signature.Name] = m.Skipped
	}
	if !maps.Equal(got, want) {
		t.Errorf("skipped reasons by function:\n got %q\nwant %q", got, want)
	}
}

// smallSource has functions too complex to inline whose bodies are small
// (Skip: its loop is in slow, which the compiler inlines into it; Class:
// straight-line code) beside ones that are not: Scan has a loop of its own,
// and Open calls a function the compiler keeps, whose time its probe measures.
const smallSource = `package s

import "os"

func slow(s string) string {
	if len(s) == 0 || s[0] != ' ' && s[0] != '\n' && s[0] != '\t' && s[0] != '\r' {
		return s
	}
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r' {
			return s[i:]
		}
	}
	return ""
}

// Skip is small: its loop is in slow, which the compiler inlines into it.
func Skip(s string) string {
	if len(s) == 0 || s[0] > 0x20 {
		return s
	}
	return slow(s)
}

// Scan has a loop of its own.
func Scan(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ',' || s[i] == ';' || s[i] == ':' {
			n++
		}
	}
	if n > 3 && len(s) > 10 && s[0] != 'x' && s[1] != 'y' && s[2] != 'z' && s[3] != 'w' {
		n--
	}
	if n > 5 && s[len(s)-1] == '.' || s[len(s)-1] == '!' {
		n++
	}
	return n
}

// Open calls a function the compiler keeps: its time is the callee's.
func Open(name string) (*os.File, error) {
	if name == "" || name[0] == '-' || name[0] == ' ' || len(name) > 255 {
		return nil, os.ErrInvalid
	}
	if name[len(name)-1] == '/' || name[len(name)-1] == ' ' {
		return nil, os.ErrInvalid
	}
	return os.Open(name)
}

// Class is straight-line code too complex to inline.
func Class(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return 1
	case c >= 'A' && c <= 'Z':
		return 2
	case c >= '0' && c <= '9':
		return 3
	case c == '_' || c == '$':
		return 4
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return 5
	case c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}':
		return 6
	}
	return 0
}
`

// TestListMatchesSmall: functions too small to be worth a probe are listed
// with the reason and the compiler's size, and monitor.small: probe keeps
// them, with the real compiler's sizes.
func TestListMatchesSmall(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "s/s.go"), smallSource)
	for _, small := range []string{"", "  small: probe\n"} {
		rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"within(example.com/m/s)\"]\n"+small)
		got := map[string]string{}
		for _, m := range rep.Matches {
			switch {
			case m.Skipped == InlinedReason:
				got[m.Signature.Name] = "inlined"
			case IsSmall(m.Skipped):
				got[m.Signature.Name] = fmt.Sprintf("small %d", m.Size)
				if !strings.Contains(m.Skipped, fmt.Sprintf("size %d ", m.Size)) {
					t.Errorf("%s: the reason does not give the size: %s", m.Signature.Name, m.Skipped)
				}
			default:
				got[m.Signature.Name] = m.Skipped
			}
		}
		want := map[string]string{"slow": "inlined", "Skip": "small 91", "Class": "small 87", "Scan": "", "Open": ""}
		if small != "" {
			want["Skip"], want["Class"] = "", ""
		}
		if !maps.Equal(got, want) {
			t.Errorf("with %q: skipped by function\n got %q\nwant %q", small, got, want)
		}
	}
}

// TestListMatchesTypeChecksOnlyWhatMayMatch: match lists every package but
// type-checks, and so compiles the imports of, only those the pointcuts may
// match. Here cmd imports a package that does not compile, as a command may
// import a large driver: listing it costs nothing and it is not compiled.
// The table counts each package's functions, the matched ones and those
// that get a probe; Progress names each step.
func TestListMatchesTypeChecksOnlyWhatMayMatch(t *testing.T) {
	dir, cfg := matchModule(t, "execution(* example.com/m/a.*(..)) && exported()",
		"a/a.go", "package a\n\nimport \"fmt\"\n\nfunc Small() int { return 1 }\n\nfunc Print(n int) {\n\tfmt.Println(n)\n\tfmt.Println(n, n)\n\tfmt.Println(n, n, n)\n}\n\nfunc unexported() {}\n",
		"cmd/main.go", "package main\n\nimport _ \"example.com/m/heavy\"\n\nfunc main() {}\n",
		"heavy/heavy.go", "package heavy\n\nvar X int = \"not an int\"\n")
	var steps []string
	rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}, Progress: func(s string) { steps = append(steps, s) }})
	if err != nil {
		t.Fatalf("ListMatches: %v (a package that cannot match was compiled)", err)
	}
	if rep.Packages != 3 || len(rep.PerPackage) != 1 {
		t.Fatalf("%d packages, per package %+v; want 3 listed, a counted", rep.Packages, rep.PerPackage)
	}
	if got, want := rep.PerPackage[0], (PackageMatches{Path: "example.com/m/a", Functions: 3, Matched: 2, Instrumented: 1}); got != want {
		t.Errorf("a: %+v, want %+v (Small inlines)", got, want)
	}
	want := []string{"listing the packages", "type-checking the 1 package(s) the pointcuts may match", "compiling the 1 package(s) with matches"}
	if len(steps) != len(want) {
		t.Fatalf("steps %q, want %d", steps, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(steps[i], want[i]) {
			t.Errorf("step %d: %q, want %q…", i+1, steps[i], want[i])
		}
	}
}

// listMatches is ListMatches of the packages under dir with the config
// yaml, failing the test on any error.
func listMatches(t *testing.T, dir, yaml string) *MatchReport {
	t.Helper()
	cfg, err := config.Parse("tigris.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ListMatches(cfg, MatchOptions{Dir: dir, Patterns: []string{"./..."}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestListMatchesOutputCachedElsewhere: the go command replays a cached
// compile's output as it printed it, file names relative to the folder of
// the go command that compiled it: after a build from a workspace's folder,
// match in the module's own folder read "svc/m/a/a.go" as
// svc/m/svc/m/a/a.go and counted every function the compiler inlines as
// instrumented (examples/petclinic: 54 of 54, where the build instruments
// 41).
func TestListMatchesOutputCachedElsewhere(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.work"), "go 1.24\n\nuse ./svc/m\n")
	dir := filepath.Join(root, "svc", "m")
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a/a.go"), "package a\n\nfunc Small() int { return 1 }\n")
	t.Setenv("GOWORK", filepath.Join(root, "go.work")) // also where CI sets GOWORK=off
	cmd := exec.Command("go", "build", "-gcflags=example.com/m/a=-m=2", "example.com/m/a")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "svc/m/a/a.go:3:6: can inline Small") {
		t.Fatalf("go build in the workspace's folder: %v\n%s", err, out)
	}
	rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"within(example.com/m/a)\"]\n")
	if len(rep.Matches) != 1 || rep.Matches[0].Skipped != InlinedReason {
		t.Errorf("matches %+v; want Small skipped as inlined", rep.Matches)
	}
}
