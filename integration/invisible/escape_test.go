package invisible

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// TestEscapesUnchanged compiles the rewriter's golden packages and the example
// service plain and through tigris, both with -m, and compares what the
// compiler says about inlining and escapes. Every difference must be one the
// policy explains: on the line of a probe prologue, the compiler's notes about
// the probe itself (inlining monitor.(*Probe).On, the deferred exit and its closure);
// and the generated probe table. Anything else (a function no longer inlined,
// a value that now escapes or moves to the heap, in the instrumented package
// or its callers) fails the test.
func TestEscapesUnchanged(t *testing.T) {
	t.Run("golden", func(t *testing.T) {
		dir := goldenModule(t)
		if bad, probed := escapeDiffs(t, dir, nil, "", "golden.test/..."); len(bad) > 0 {
			t.Errorf("%d inlining or escape decision(s) differ from the plain build (%d probed lines):\n%s", len(bad), probed, strings.Join(bad, "\n"))
		}
	})
	t.Run("petclinic", func(t *testing.T) {
		itest.RequireGo(t)
		dir := filepath.Join(itest.RepoRoot, "examples", "petclinic")
		if bad, probed := escapeDiffs(t, dir, []string{"GOFLAGS=-mod=readonly"}, "", petclinicPattern); len(bad) > 0 {
			t.Errorf("%d inlining or escape decision(s) differ from the plain build (%d probed lines):\n%s", len(bad), probed, strings.Join(bad, "\n"))
		}
	})
}

const petclinicPattern = "github.com/tigrisgo/tigris/examples/petclinic/..."

// TestInlinableProbeCost is what the default policy saves (docs/pointcuts.md,
// "Functions the compiler inlines"): with monitor.inlinable: probe, the same
// comparison over the example service finds functions no longer inlined and
// values that now escape or move to the heap. The counts are logged for the
// docs; the test fails if there are none, since then the policy would cost
// probes for nothing.
func TestInlinableProbeCost(t *testing.T) {
	itest.RequireGo(t)
	dir := filepath.Join(itest.RepoRoot, "examples", "petclinic")
	data, err := os.ReadFile(filepath.Join(dir, "tigris.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "tigris.yaml")
	itest.WriteFile(t, cfg, strings.Replace(string(data), "\nmonitor:\n", "\nmonitor:\n  inlinable: probe\n", 1))
	bad, probed := escapeDiffs(t, dir, []string{"GOFLAGS=-mod=readonly"}, cfg, petclinicPattern)
	var inlinable, inlined, escapes, moved int
	for _, b := range bad {
		switch {
		case strings.Contains(b, `"can inline`):
			inlinable++ // a function no longer inlinable
		case strings.Contains(b, `"inlining call to`):
			inlined++ // a call site no longer inlined
		case strings.Contains(b, "moved to heap"):
			moved++
		case strings.Contains(b, "escapes to heap"):
			escapes++
		}
	}
	t.Logf("monitor.inlinable: probe on the example service: %d probe prologues; %d functions no longer inlinable, %d call sites no longer inlined, %d \"escapes to heap\" and %d \"moved to heap\" notes differ from the plain build (%d differences in all)",
		probed, inlinable, inlined, escapes, moved, len(bad))
	if testing.Verbose() {
		t.Logf("%s", strings.Join(bad, "\n"))
	}
	if inlinable == 0 || escapes+moved == 0 {
		t.Errorf("with inlinable: probe no inlining or escape decision changed:\n%s", strings.Join(bad, "\n"))
	}
}

// goldenModule writes a module golden.test holding the input of every golden
// case of the rewriter, with one config that includes what each case's does.
func goldenModule(t *testing.T) string {
	t.Helper()
	itest.RequireGo(t)
	cases, _ := filepath.Glob(filepath.Join(itest.RepoRoot, "rewriter", "testdata", "golden", "*.txtar"))
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	files := map[string]string{}
	var include []string
	for _, c := range cases {
		a, err := txtar.ParseFile(c)
		if err != nil {
			t.Fatal(err)
		}
		pkg, _, _ := strings.Cut(string(a.Comment), "\n")
		rel := strings.TrimPrefix(strings.TrimSpace(pkg), "golden.test/")
		if rel == "main" {
			continue // a command: not importable beside the others' packages
		}
		for _, f := range a.Files {
			switch {
			case f.Name == "tigris.yaml":
				cfg, err := config.Parse(c, f.Data)
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Instrument != nil {
					include = append(include, cfg.Instrument.String())
				}
			case strings.HasPrefix(f.Name, "in/"):
				files[rel+"/"+strings.TrimPrefix(f.Name, "in/")] = string(f.Data)
			}
		}
	}
	var b strings.Builder
	b.WriteString("version: 1\nmonitor:\n  include:\n")
	for _, e := range include {
		fmt.Fprintf(&b, "    - %q\n", e)
	}
	files["tigris.yaml"] = b.String()
	return itest.NewModuleAt(t, "golden.test", files)
}

// diag is one -m line without its column (columns on a probe's line move).
type diag struct{ file, line, msg string }

var diagRE = regexp.MustCompile(`^(\S+?):(\d+)(?::\d+)?: (.*)$`)

// escapes compiles the packages of pattern with -m and returns the
// compiler's notes, counted. tigris builds through tigris go, with config
// ("" for the module's tigris.yaml).
func escapes(t *testing.T, dir string, env []string, tigris bool, config, pattern string) map[diag]int {
	t.Helper()
	args := []string{"build", "-gcflags=" + pattern + "=-m", "./..."}
	exe := itest.GoExe
	if tigris {
		exe = itest.TigrisBin
		if config != "" {
			args = append([]string{"--config", config}, args...)
		}
		args = append([]string{"go"}, args...)
	}
	out, code := itest.Run(t, dir, env, exe, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", exe, strings.Join(args, " "), code, out)
	}
	notes := map[diag]int{}
	for _, line := range strings.Split(out, "\n") {
		m := diagRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		if strings.HasPrefix(file, filepath.Join(itest.RepoRoot, "runtime")+string(filepath.Separator)) {
			continue // the runtime's generic exits, instantiated in the package
		}
		if strings.Contains(m[3], "github.com/tigrisgo/tigris/runtime/") {
			// Generic code instantiated with the runtime's types where the
			// inlined probe uses it (sync/atomic's Pointer[...] of the
			// monitor's taps): the probe's own code, whatever the file.
			continue
		}
		// Results tigris had to name (__tgrN) are ~rN to the plain compiler,
		// and the probe's deferred call, the function's first, takes the name
		// deferwrap1 and shifts the numbers of the function's own deferred
		// calls with arguments (a name, not a decision).
		msg := tgResult.ReplaceAllString(m[3], "~r$1")
		msg = deferwrapN.ReplaceAllString(msg, "deferwrap#")
		msg = gowrapN.ReplaceAllString(msg, "gowrap#") // the same counter
		notes[diag{filepath.Clean(file), m[2], msg}]++
	}
	if len(notes) == 0 {
		t.Fatalf("no -m output from %s %s:\n%s", exe, strings.Join(args, " "), out)
	}
	return notes
}

var (
	tgResult   = regexp.MustCompile(`__tgr(\d+)`)
	deferwrapN = regexp.MustCompile(`deferwrap\d+`)
	gowrapN    = regexp.MustCompile(`gowrap\d+`)
)

// goSpans maps the first and last line of every go statement that tigris
// rewrote (its first line calls monitor.Fork, its wrapper Link.Adopt) to
// "first-last", so that the
// two lines' notes are compared together.
func goSpans(t *testing.T, inst map[diag]int) map[[2]string]string {
	t.Helper()
	forked := map[string]map[int]bool{}
	for d := range inst {
		// Fork in the function, or Adopt in the wrapper, whose //line is
		// the go statement's (a generic function is not compiled until
		// instantiated: its Fork has no note).
		if d.msg == "inlining call to monitor.Fork" || d.msg == "inlining call to monitor.Link.Adopt" {
			if forked[d.file] == nil {
				forked[d.file] = map[int]bool{}
			}
			n, _ := strconv.Atoi(d.line)
			forked[d.file][n] = true
		}
	}
	spans := map[[2]string]string{}
	for file, lines := range forked {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if st, ok := n.(*ast.GoStmt); ok {
				first := fset.Position(st.Go).Line
				last := fset.Position(st.Call.Fun.End()).Line
				if lines[first] {
					g := fmt.Sprintf("%d-%d", first, last)
					spans[[2]string{file, strconv.Itoa(first)}] = g
					spans[[2]string{file, strconv.Itoa(fset.Position(st.End()).Line)}] = g
					spans[[2]string{file, strconv.Itoa(last)}] = g
				}
			}
			return true
		})
	}
	return spans
}

// goNote matches what the compiler says about a rewritten go statement's own
// code (rewriter/gostmt.go): Fork and its atomic load, the branch that starts
// the goroutine through the generated wrapper, whose closure (gowrap) and
// parameters (__tg...) are tigris's, and the wrapper's body, which the //line
// directive puts on the go statement's line: it inlines the goroutine's
// function where the plain go statement may call it (newproc calls a
// function without arguments directly).
var goNote = regexp.MustCompile(`monitor\.|gowrap|atomic\.\(\*Uint64\)\.Load|__tg|__tigris_go|^inlining call to `)

// probeNote matches what the compiler says about a probe prologue itself.
var probeNote = regexp.MustCompile(`monitor\.|deferwrap|\.func\d+|func literal|atomic\.\(\*Uint32\)\.Load|__tg|` +
	// The join of a recorded root's request (r.Context(), whose nil case
	// is context.Background's zero-size value).
	`http\.\(\*Request\)\.Context|context\.Background|context\.backgroundCtx\{\} (escapes|does not escape)`)

// escapeDiffs compiles pattern's packages plain and through tigris (with
// config, "" for the module's) and returns the notes that differ in a way the
// policy does not explain, and how many probe prologues were compiled.
func escapeDiffs(t *testing.T, dir string, env []string, config, pattern string) (bad []string, probed int) {
	t.Helper()
	plain := escapes(t, dir, env, false, "", pattern)
	inst := escapes(t, dir, env, true, config, pattern)
	// Lines with a probe prologue: the compiler inlines monitor.(*Probe).On
	// there (monitor.Enter for a call-site probe); and the returns of
	// defer-free probed functions that declare a predeclared name anew, where
	// monitor.Done, DoneErr, DoneInt[...], ... end the call (elsewhere a test
	// and a call of End, of which the compiler notes nothing).
	probedLines := map[[2]string]bool{}
	for d := range inst {
		if d.msg == "inlining call to monitor.(*Probe).On" || d.msg == "inlining call to monitor.Enter" ||
			strings.HasPrefix(d.msg, "inlining call to monitor.Done") {
			probedLines[[2]string{d.file, d.line}] = true
		}
	}
	if len(probedLines) == 0 {
		t.Fatal("no probe prologue in the instrumented build: nothing to compare")
	}
	// A rewritten go statement (rewriter/gostmt.go) keeps the statement as
	// written and adds, on its first line (Fork, the branch that links) and,
	// for a function literal, on the literal's last line (the two go
	// statements), code whose notes are tigris's. The notes of those two
	// lines are compared together: every plain note must still be there (the
	// compiler notes the goroutine's closure where the go statement now
	// is), the same notes may come more often (the branch that links
	// compiles the arguments once more), and the rest must be tigris's.
	spans := goSpans(t, inst)
	group := func(d diag) diag {
		if g, ok := spans[[2]string{d.file, d.line}]; ok {
			d.line = g
		}
		return d
	}
	plainG, instG := map[diag]int{}, map[diag]int{}
	for d, n := range plain {
		plainG[group(d)] += n
	}
	for d, n := range inst {
		instG[group(d)] += n
	}
	for d, n := range inst {
		if strings.Contains(d.file, "__tigris_probes.go") {
			continue // the generated probe table
		}
		if plain[d] == n {
			continue
		}
		if plain[d] == 0 && probedLines[[2]string{d.file, d.line}] && probeNote.MatchString(d.msg) {
			continue // the probe's own code
		}
		if g := group(d); g != d && (instG[g] >= plainG[g] && plainG[g] > 0 || plainG[g] == 0 && goNote.MatchString(d.msg)) {
			continue // a rewritten go statement
		}
		bad = append(bad, fmt.Sprintf("%s:%s: %q %d times instrumented, %d times plain", d.file, d.line, d.msg, n, plain[d]))
	}
	for d, n := range plain {
		if g := group(d); g != d && instG[g] > 0 {
			continue // compared above, with the go statement's other line
		}
		if _, ok := inst[d]; !ok {
			bad = append(bad, fmt.Sprintf("%s:%s: %q %d times plain, never instrumented", d.file, d.line, d.msg, n))
		}
	}
	sort.Strings(bad)
	return bad, len(probedLines)
}
