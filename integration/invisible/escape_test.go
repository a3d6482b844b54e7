package invisible

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
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
// the probe itself (inlining monitor.Enter, the deferred exit and its closure);
// and the generated probe table. Anything else (a function no longer inlined,
// a value that now escapes or moves to the heap, in the instrumented package
// or its callers) fails the test.
func TestEscapesUnchanged(t *testing.T) {
	t.Run("golden", func(t *testing.T) {
		dir := goldenModule(t)
		compareEscapes(t, dir, nil, "golden.test/...")
	})
	t.Run("petclinic", func(t *testing.T) {
		itest.RequireGo(t)
		dir := filepath.Join(itest.RepoRoot, "examples", "petclinic")
		compareEscapes(t, dir, []string{"GOFLAGS=-mod=readonly"}, "github.com/tigrisgo/tigris/examples/petclinic/...")
	})
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
// compiler's notes, counted.
func escapes(t *testing.T, dir string, env []string, tigris bool, pattern string) map[diag]int {
	t.Helper()
	args := []string{"build", "-gcflags=" + pattern + "=-m", "./..."}
	exe := itest.GoExe
	if tigris {
		exe, args = itest.TigrisBin, append([]string{"go"}, args...)
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
		// Results tigris had to name (__tgrN) are ~rN to the plain compiler,
		// and the probe's deferred call, the function's first, takes the name
		// deferwrap1 and shifts the numbers of the function's own deferred
		// calls with arguments (a name, not a decision).
		msg := tgResult.ReplaceAllString(m[3], "~r$1")
		msg = deferwrapN.ReplaceAllString(msg, "deferwrap#")
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
)

// probeNote matches what the compiler says about a probe prologue itself.
var probeNote = regexp.MustCompile(`monitor\.|deferwrap|\.func\d+|func literal|atomic\.\(\*Uint32\)\.Load|__tg`)

func compareEscapes(t *testing.T, dir string, env []string, pattern string) {
	plain := escapes(t, dir, env, false, pattern)
	inst := escapes(t, dir, env, true, pattern)
	// Lines with a probe prologue: the compiler inlines monitor.Enter there.
	probed := map[[2]string]bool{}
	for d := range inst {
		if d.msg == "inlining call to monitor.Enter" {
			probed[[2]string{d.file, d.line}] = true
		}
	}
	if len(probed) == 0 {
		t.Fatal("no probe prologue in the instrumented build: nothing to compare")
	}
	var bad []string
	for d, n := range inst {
		if strings.Contains(d.file, "__tigris_probes.go") {
			continue // the generated probe table
		}
		if plain[d] == n {
			continue
		}
		if plain[d] == 0 && probed[[2]string{d.file, d.line}] && probeNote.MatchString(d.msg) {
			continue // the probe's own code
		}
		bad = append(bad, fmt.Sprintf("%s:%s: %q %d times instrumented, %d times plain", d.file, d.line, d.msg, n, plain[d]))
	}
	for d, n := range plain {
		if _, ok := inst[d]; !ok {
			bad = append(bad, fmt.Sprintf("%s:%s: %q %d times plain, never instrumented", d.file, d.line, d.msg, n))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d inlining or escape decision(s) differ from the plain build (%d probed lines):\n%s", len(bad), len(probed), strings.Join(bad, "\n"))
	}
}
