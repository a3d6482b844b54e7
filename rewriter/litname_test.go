package rewriter

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tigrisgo/tigris/internal/sorted"
)

// TestLiteralNamesAgreeWithCompiler builds testdata/litnames.txtar with the
// toolchain the test runs with and compares the names runtime.FuncForPC gives
// its function literals with literalNames. Without inlining every literal is a
// function of its own, named as the compiler names it; with inlining, Go 1.27
// gives the copies the same names, but for the separator before the number of
// a nested literal whose enclosing literal was inlined (F.func1.func1).
func TestLiteralNamesAgreeWithCompiler(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	ar, err := txtar.ParseFile("testdata/litnames.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var srcs []string
	for _, f := range ar.Files {
		writeFile(t, filepath.Join(dir, f.Name), string(f.Data))
		if strings.HasPrefix(f.Name, "p/") {
			srcs = append(srcs, filepath.Join(dir, f.Name))
		}
	}
	sort.Strings(srcs) // the go command's order

	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range srcs {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("example.com/lit/p", fset, files, info); err != nil {
		t.Fatal(err)
	}
	names := literalNames(files, info, toolchainRangeScopes)

	// want: each tag's name, from the innermost literal around its rec call.
	want := map[string]string{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.FuncLit); ok {
				ast.Inspect(fl.Body, func(m ast.Node) bool {
					if inner, ok := m.(*ast.FuncLit); ok && inner != fl {
						return false
					}
					if tag, ok := recTag(m); ok {
						name := "(no name)"
						if n, ok := names[fl]; ok {
							name = n.String()
						}
						want[tag] = "example.com/lit/p." + name
					}
					return true
				})
			}
			return true
		})
	}
	delete(want, "never")
	if len(want) < 25 {
		t.Fatalf("only %d tagged literals found: %v", len(want), want)
	}

	check := func(t *testing.T, flags string, copyName func(string) string) {
		cmd := exec.Command("go", "run", "-gcflags=example.com/lit/p="+flags, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go run: %v\n%s", err, out)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if tag, name, ok := strings.Cut(line, " "); ok {
				got[tag] = name
			}
		}
		if name, ok := got["never"]; ok {
			t.Errorf("a literal in code the compiler leaves out ran: %s", name)
		}
		for _, tag := range sorted.Keys(want) {
			if got[tag] != want[tag] && (copyName == nil || got[tag] != copyName(want[tag])) {
				t.Errorf("%s: runtime.FuncForPC says %q, literalNames %q", tag, got[tag], want[tag])
			}
		}
	}
	t.Run("noinline", func(t *testing.T) { check(t, "-l", nil) })
	t.Run("inline", func(t *testing.T) {
		if !toolchainRangeScopes {
			t.Skip(runtime.Version() + " names the copies of an inlined function's literals after the function they are inlined into")
		}
		// A copy of a nested literal made where its enclosing literal is
		// inlined into a declared function has ".func" before its number.
		check(t, "", func(name string) string {
			i := strings.LastIndexByte(name, '.')
			return name[:i] + ".func" + name[i+1:]
		})
	})
}

// recTag is the tag of a call rec("tag").
func recTag(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "rec" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

var tableLine = regexp.MustCompile(`(?m)^// \d+ p\.([^(]+)\(`)

func TestRangeBodiesAreScopes(t *testing.T) {
	for v, want := range map[string]bool{"go1.26.8": false, "go1.26rc1": false, "go1.27.3": true, "go1.28": true, "devel go1.28-abc": true} {
		if got := rangeBodiesAreScopes(v); got != want {
			t.Errorf("rangeBodiesAreScopes(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestLiteralsInlinedGetNoProbe instruments a package whose literals a
// pointcut selects, with the compiler's -m=2 answer (as the proxy's
// inlining pass gets it): a literal the compiler inlines at a call keeps no
// probe (monitor.inlinable: skip); one it does not inline gets one, also
// when -m says "can inline" of it (the deferred Kept.func1.1: the compiler
// says so of nearly every literal, with a budget of 800); and
// monitor.inlinable: probe instruments all.
func TestLiteralsInlinedGetNoProbe(t *testing.T) {
	src := `package p

func Inlined() int {
	f := func() int { return 1 }
	return f()
}

func Kept(xs []int) (n int) {
	g := func() {
		defer func() { n++ }()
		for _, x := range xs {
			n += x
		}
	}
	g()
	return n
}
`
	for _, tc := range []struct {
		inlinable string
		want      []string
	}{
		{"skip", []string{"Kept.func1", "Kept.func1.1"}},
		{"probe", []string{"Inlined.func1", "Kept.func1", "Kept.func1.1"}},
	} {
		t.Run(tc.inlinable, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "p.go")
			writeFile(t, file, src)
			writeFile(t, filepath.Join(dir, "tigris.yaml"), "version: 1\nmonitor:\n  inlinable: "+tc.inlinable+"\n  small: probe\n  include: [\"within(p) && literal()\"]\n")
			s, err := NewSession(SessionOptions{ConfigPath: filepath.Join(dir, "tigris.yaml")})
			if err != nil {
				t.Fatal(err)
			}
			cfg := stdImportCfg(t)
			job := &CompileJob{ImportPath: "p", Files: []string{file}, WorkDir: t.TempDir(), Complete: true, ImportCfg: cfg}
			job.Inlinable = func([]string) (Inlining, error) {
				var importcfg strings.Builder
				for p, f := range cfg {
					importcfg.WriteString("packagefile " + p + "=" + f + "\n")
				}
				icfg := filepath.Join(dir, "importcfg")
				writeFile(t, icfg, importcfg.String())
				out, _ := exec.Command("go", "tool", "compile", "-m=2", "-p", "p", "-importcfg", icfg, "-o", filepath.Join(dir, "p.a"), file).CombinedOutput()
				inl, _ := parseInlining(string(out))
				return inl, nil
			}
			if _, err := s.Instrument(job); err != nil {
				t.Fatal(err)
			}
			// The probe table's comment lists the probes: "// 0 p.Kept.func1() p/p.go:9 ...".
			var got []string
			if table := job.Files[0]; strings.HasSuffix(table, "__tigris_probes.go") {
				data, _ := os.ReadFile(table)
				for _, m := range tableLine.FindAllStringSubmatch(string(data), -1) {
					got = append(got, m[1])
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("probes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestListMatchesLiterals: tigris match lists each function literal a
// pointcut selects at its func keyword, with its Go name, and says which
// get no probe and why, as the build decides: the compiler inlines one, one
// is written in a function that is never instrumented.
func TestListMatchesLiterals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	writeFile(t, filepath.Join(dir, "a/a.go"), `package a

import (
	"fmt"
	"net/http"
)

func NewHandler(greeting string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", greeting, r.URL.Path)
		fmt.Fprintf(w, "%s %s", greeting, r.URL.Path)
	}
}

func Twice() int { f := func() int { return 2 }; return f() + f() }

//go:nosplit
func Fast() func() { return func() { fmt.Println(); fmt.Println() } }

func Plain() {}
`)
	rep := listMatches(t, dir, "version: 1\nmonitor:\n  include: [\"within(example.com/m/...) && literal()\"]\n")
	var got []string
	for _, m := range rep.Matches {
		s := fmt.Sprintf("%d:%d %s", m.Pos.Line, m.Pos.Column, m.Signature.String())
		if m.Skipped != "" {
			s += " (" + m.Skipped + ")"
		}
		got = append(got, s)
	}
	want := []string{
		"9:9 func example.com/m/a.NewHandler.func1(net/http.ResponseWriter, *net/http.Request)",
		"15:25 func example.com/m/a.Twice.func1() int (" + InlinedReason + ")",
		"18:29 func example.com/m/a.Fast.func1() (written in a function that gets no probe: marked //go:nosplit)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("matches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(rep.PerPackage) != 1 || rep.PerPackage[0].Matched != 3 || rep.PerPackage[0].Instrumented != 1 {
		t.Errorf("per package %+v, want 3 literals matched, 1 instrumented", rep.PerPackage)
	}
}
