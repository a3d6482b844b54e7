package rewriter

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// inliningCorpus are packages whose inlining the reduced pass must tell as
// the whole package's compile does: std packages of many shapes (generics,
// closures, defers, assembly, large switch-heavy bodies) and one of tigris's
// own, a module package with third-party imports.
var inliningCorpus = []string{
	"encoding/json", "text/template/parse", "compress/flate", "regexp/syntax",
	"slices", "math/big", "go/scanner", "archive/tar", "net/url",
	"github.com/tigrisgo/tigris/rewriter",
}

// TestInliningPassAgreesWithCompiler compiles each package of the corpus
// twice with -m=2, whole and reduced (inliningFiles), and checks that the
// compiler says the same of every function the reduced copy keeps: whether
// it inlines, its size up to SmallSize, the calls it inlines in it; and that
// costFloor never exceeds the cost the compiler gives a function.
func TestInliningPassAgreesWithCompiler(t *testing.T) {
	corpus := inliningCorpus
	if testing.Short() {
		corpus = corpus[:3]
	}
	for _, path := range corpus {
		t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			checkInliningPass(t, "", path)
		})
	}
	// More packages, of modules on disk: TIGRIS_INLINING_CORPUS=DIR=PKG,...
	// (a large server package took 14 s reduced against 36 s whole).
	for _, dp := range strings.Split(os.Getenv("TIGRIS_INLINING_CORPUS"), ",") {
		if dir, path, ok := strings.Cut(dp, "="); ok {
			t.Run(strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
				checkInliningPass(t, dir, path)
			})
		}
	}
}

// listedPackage is what the test needs of go list's answer for one package.
type listedPackage struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	SFiles     []string
	Standard   bool
	Module     *struct{ GoVersion string }
}

func checkInliningPass(t *testing.T, dir, path string) {
	lc := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,SFiles,Standard,Module", path)
	lc.Dir = dir
	out, err := lc.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", path, err)
	}
	cfg := map[string]string{}
	var pkg listedPackage
	for dec := json.NewDecoder(strings.NewReader(string(out))); dec.More(); {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		cfg[p.ImportPath] = p.Export
		pkg = p // the last is the package itself
	}
	if len(pkg.SFiles) > 0 {
		t.Skipf("%s has assembly: its compile needs the go command's symabis", path)
	}
	var files []string
	for _, f := range pkg.GoFiles {
		files = append(files, filepath.Join(pkg.Dir, f))
	}
	work := t.TempDir()
	var cfgText strings.Builder
	for p, f := range cfg {
		if f != "" {
			fmt.Fprintf(&cfgText, "packagefile %s=%s\n", p, f)
		}
	}
	cfgFile := filepath.Join(work, "importcfg")
	writeFile(t, cfgFile, cfgText.String())
	lang := ""
	if pkg.Module != nil && pkg.Module.GoVersion != "" {
		v := strings.Split(pkg.Module.GoVersion, ".")
		lang = "go" + strings.Join(v[:min(2, len(v))], ".")
	}
	toolDir, err := exec.Command("go", "env", "GOTOOLDIR").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The whole package's compile runs to its end; the reduced one as the
	// proxy runs it (compileUntilInlined), which must stop where escape
	// analysis begins.
	compile := func(name string, files []string) (Inlining, map[string]int) {
		args := []string{"-p", path, "-importcfg", cfgFile, "-o", filepath.Join(work, name+".a"), "-m=2"}
		if pkg.Standard {
			args = append(args, "-std")
		}
		if lang != "" {
			args = append(args, "-lang="+lang)
		}
		cmd := exec.Command(filepath.Join(strings.TrimSpace(string(toolDir)), "compile"), append(args, files...)...)
		var out []byte
		var err error
		if name == "reduced" {
			var text string
			var stopped bool
			text, stopped, err = compileUntilInlined(cmd)
			out = []byte(text)
			if err == nil && !stopped {
				t.Errorf("the reduced compile of %s ran to its end: no line of escape analysis was recognised (escapeLine)", path)
			}
		} else {
			out, err = cmd.CombinedOutput()
		}
		if cmd.ProcessState != nil {
			t.Logf("%s compile: %v CPU", name, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
		if err != nil {
			t.Fatalf("%s compile of %s: %v\n%s", name, path, err, firstLines(string(out), 20))
		}
		inl, _ := parseInlining(string(out))
		return inl, inlineCosts(string(out))
	}
	whole, costs := compile("whole", files)

	pj := &packageJob{job: &CompileJob{ImportPath: path, Files: files, ImportCfg: cfg, Lang: lang}, fset: token.NewFileSet()}
	if err := pj.parse(); err != nil {
		t.Fatal(err)
	}
	if err := pj.typeCheck(); err != nil {
		t.Fatal(err)
	}
	reducedFiles, stubbed, err := pj.inliningFiles(filepath.Join(work, "inl"))
	if err != nil {
		t.Fatal(err)
	}
	reduced, _ := compile("reduced", reducedFiles)

	funcs, kept, floorMisses := 0, 0, 0
	noInline, floors := pj.notInlined()
	stub := pj.stubs()
	var ratios []float64
	var inStub []func(file string, line int) bool
	for _, f := range pj.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			funcs++
			pos := pj.fset.Position(fd.Name.Pos())
			key := fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
			floor := floors[pj.info.Defs[fd.Name].(*types.Func)]
			if c, ok := costs[key]; ok && c > 0 {
				ratios = append(ratios, float64(floor)/float64(c))
			}
			if fn := pj.info.Defs[fd.Name].(*types.Func); noInline[fn] && whole.Inlined[key] {
				t.Errorf("%s: %s: notInlined holds it, but the compiler inlines it", key, fd.Name.Name)
			}
			if c, ok := costs[key]; ok && floor > c {
				floorMisses++
				t.Errorf("%s: %s: costFloor %d exceeds the compiler's cost %d", key, fd.Name.Name, floor, c)
			}
			if stub[fd] != "" {
				if whole.Inlined[key] {
					t.Errorf("%s: %s was stubbed, but the compiler inlines it", key, fd.Name.Name)
				}
				if reduced.Inlined[key] {
					t.Errorf("%s: %s was stubbed, but the reduced compile says it inlines", key, fd.Name.Name)
				}
				if pj.small(fd, whole.Size[key], whole.Calls) {
					t.Errorf("%s: %s was stubbed, but it is small (size %d)", key, fd.Name.Name, whole.Size[key])
				}
				file := pj.fset.Position(fd.Body.Lbrace).Filename
				from, to := pj.fset.Position(fd.Body.Lbrace).Line, pj.fset.Position(fd.Body.Rbrace).Line
				inStub = append(inStub, func(f string, line int) bool {
					return filepath.Base(f) == filepath.Base(file) && line >= from && line <= to
				})
				continue
			}
			kept++
			if whole.Inlined[key] != reduced.Inlined[key] {
				t.Errorf("%s: %s: inlined %v whole, %v reduced", key, fd.Name.Name, whole.Inlined[key], reduced.Inlined[key])
			}
			if w, r := whole.Size[key], reduced.Size[key]; (w <= SmallSize || r <= SmallSize) && w != r {
				t.Errorf("%s: %s: size %d whole, %d reduced", key, fd.Name.Name, w, r)
			}
		}
	}
	local := map[string]bool{}
	for _, f := range files {
		local[filepath.Base(f)] = true
	}
	stubs := func(call string) bool {
		parts := strings.Split(call, ":")
		if !local[parts[0]] {
			return true // a call inlined from another package's body: only where it was inlined tells
		}
		line, _ := strconv.Atoi(parts[1])
		for _, in := range inStub {
			if in(parts[0], line) {
				return true
			}
		}
		return false
	}
	for c := range whole.Calls {
		if !reduced.Calls[c] && !stubs(c) {
			t.Errorf("%s: the whole compile inlines the call, the reduced one does not", c)
		}
	}
	for c := range reduced.Calls {
		if !whole.Calls[c] && !stubs(c) {
			t.Errorf("%s: the reduced compile inlines the call, the whole one does not", c)
		}
	}
	if stubbed != funcs-kept {
		t.Errorf("inliningFiles stubbed %d bodies, stubbable says %d", stubbed, funcs-kept)
	}
	slices.Sort(ratios)
	t.Logf("%s: %d of %d function bodies stubbed; %d costs compared, costFloor/cost median %.2f", path, stubbed, funcs, len(costs), ratios[len(ratios)/2])
	if floorMisses == 0 && stubbed == 0 && funcs > 50 {
		t.Errorf("nothing stubbed in %d functions: the reduction does not work", funcs)
	}
}

// costLine is -m=2's cost of a function: "can inline F with cost N" or
// "cannot inline F: function too complex: cost N exceeds budget 80".
var costLine = regexp.MustCompile(`^(.*?):(\d+):\d+: (?:can inline (\S+) with cost (\d+)|cannot inline (\S+): function too complex: cost (\d+) exceeds)`)

// inlineCosts returns the compiler's cost of each function body, by the
// file's base name and line; for generic functions, the smallest of their
// shapes' (a lower bound must stay below every one).
func inlineCosts(out string) map[string]int {
	costs := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		m := costLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, cost := m[3]+m[5], m[4]+m[6]
		if strings.Contains(name, ".func") || (strings.Contains(name, "[") && !strings.Contains(name, "go.shape.")) {
			continue // a function literal, an instantiation's wrapper
		}
		n, _ := strconv.Atoi(cost)
		key := filepath.Base(m[1]) + ":" + m[2]
		if c, ok := costs[key]; !ok || n < c {
			costs[key] = n
		}
	}
	return costs
}

// TestStubKeepsPositions checks that a stubbed body keeps the lines of what
// follows it and that an import only the stub used becomes blank.
func TestStubKeepsPositions(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nimport (\n\t\"fmt\"\n\tstr \"strings\"\n)\n\nfunc Big(a []int) (n int) {\n\tdefer fmt.Println()\n\tfor _, v := range a {\n\t\tn += v\n\t}\n\treturn\n}\n\nfunc Small(s string) string { return str.ToUpper(s) }\n"
	pj := checkedJob(t, dir, src)
	files, stubbed, err := pj.inliningFiles(filepath.Join(dir, "inl"))
	if err != nil || stubbed != 1 {
		t.Fatalf("stubbed %d, %v; want 1", stubbed, err)
	}
	data, _ := os.ReadFile(files[0])
	got := string(data)
	want := "package p\n\nimport (\n\t_ \"fmt\"\n\tstr \"strings\"\n)\n\nfunc Big(a []int) (n int) {" + stubBody + "\n\n\n\n\n\n}\n\nfunc Small(s string) string { return str.ToUpper(s) }\n"
	if !strings.HasSuffix(got, want) || strings.Count(got, "\n") != strings.Count(src, "\n")+1 {
		t.Errorf("reduced file:\n%s\nwant (after its //line directive):\n%s", got, want)
	}
}

// TestStubKeepsInstantiations: a body that instantiates a generic function
// of its package, with or without type arguments written, is not stubbed
// (the compiler compiles, and reports on, only the shapes the package uses).
func TestStubKeepsInstantiations(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nfunc G[T int | uint](x T) T { return x + 1 }\n\n" +
		"func Inferred(n int) int {\n\tdefer println()\n\treturn G(n)\n}\n\n" +
		"func Explicit(n uint) uint {\n\tdefer println()\n\treturn G[uint](n)\n}\n\n" +
		"func Neither(n int) int {\n\tdefer println()\n\treturn n\n}\n"
	pj := checkedJob(t, dir, src)
	got := map[string]bool{}
	for fd, text := range pj.stubs() {
		got[fd.Name.Name] = text != ""
	}
	if got["Inferred"] || got["Explicit"] || !got["Neither"] {
		t.Errorf("stubbed %v; want Neither only", got)
	}
}

// checkedJob writes src as dir/p.go, package p, and returns its job parsed
// and type-checked against the standard library.
func checkedJob(t *testing.T, dir, src string) *packageJob {
	t.Helper()
	file := filepath.Join(dir, "p.go")
	writeFile(t, file, src)
	pj := &packageJob{job: &CompileJob{ImportPath: "p", Files: []string{file}, ImportCfg: stdImportCfg(t)}, fset: token.NewFileSet()}
	if err := pj.parse(); err != nil {
		t.Fatal(err)
	}
	if err := pj.typeCheck(); err != nil {
		t.Fatal(err)
	}
	return pj
}
