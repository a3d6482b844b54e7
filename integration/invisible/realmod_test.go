package invisible

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/compat"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// realModule is a published module whose own tests run as a new user of
// tigris would run them: the module is the main module (its go.mod, go line
// and requirements as published), `tigris init` and `go mod tidy` run in it,
// and its tests run plain and through tigris with every function of the
// module in fine mode. integration/compat runs modules as dependencies of a
// module of its own; only this way does what tigris init does to go.mod
// reach the module's tests.
type realModule struct {
	path, version string
	exercises     string // what it covers of issue 18
	ci            bool   // in the default set; TIGRIS_REAL=full runs every module
}

var realModules = []realModule{
	{"github.com/cespare/xxhash/v2", "v2.3.0", "go 1.11; AllocsPerRun around the inlined New().Write; a test that builds a plugin plainly and loads it", true},
	{"github.com/google/uuid", "v1.6.0", "no go line (go 1.16 rules, which a go command writing go.mod would replace)", true},
	{"go.uber.org/zap", "v1.28.0", "go 1.19; goleak in TestMain and tests; printf-like Sugar methods under vet", true},
	{"github.com/spf13/pflag", "v1.0.10", "go 1.12; printf-like helpers", true},
	{"go.uber.org/multierr", "v1.11.0", "go 1.19; error wrapping", false},
	{"github.com/hashicorp/go-version", "v1.9.0", "no go line", false},
	{"github.com/kylelemons/godebug", "v1.1.0", "go 1.11; reflection", false},
	{"github.com/rs/cors", "v1.11.1", "go 1.13; net/http handlers", false},
	{"github.com/beorn7/perks", "v1.0.1", "go 1.11; quantile streams", false},
	{"github.com/mitchellh/copystructure", "v1.2.0", "go 1.15; reflection, a dependency on reflectwalk (no go line)", false},
	{"github.com/go-logr/logr", "v1.4.4", "go 1.18; generics, printf-free logging API", false},
}

// TestRealModules: for each module, tigris init keeps the go line and every
// requirement's version, and the module's tests give the same verdicts plain
// and instrumented (fine mode, every function of the module), with calls
// recorded. TIGRIS_REAL=full runs every module, TIGRIS_REAL=a,b the modules
// whose path ends in a or b.
func TestRealModules(t *testing.T) {
	sel := os.Getenv("TIGRIS_REAL")
	for _, m := range realModules {
		if !selected(m, sel) {
			continue
		}
		t.Run(m.path+"@"+m.version, func(t *testing.T) { runRealModule(t, m) })
	}
}

func selected(m realModule, sel string) bool {
	switch sel {
	case "":
		return m.ci
	case "full":
		return true
	}
	for _, s := range strings.Split(sel, ",") {
		if s != "" && strings.HasSuffix(m.path, s) {
			return true
		}
	}
	return false
}

func runRealModule(t *testing.T, m realModule) {
	itest.RequireGo(t)
	dir := copyModule(t, m)
	readonly := []string{"GOFLAGS=-mod=readonly"}
	line, versions := itest.GoLine(t, dir), moduleVersions(t, dir)

	plain, plainOut := testVerdicts(t, dir, readonly, itest.GoExe, "test")
	tigrisInit(t, dir, line)
	after := moduleVersions(t, dir)
	for p, v := range versions {
		if after[p] != v {
			t.Errorf("%s was %s before tigris init and is %s after it", p, v, after[p])
		}
	}

	traces := t.TempDir()
	env := append(readonly, "TIGRIS_MODE=fine", "TIGRIS_OUT="+filepath.Join(traces, "{binary}-{pid}.tgr"))
	inst, instOut := testVerdicts(t, dir, env, itest.TigrisBin, "go", "test")
	if diffs := compat.Compare(plain, inst); len(diffs) > 0 {
		t.Errorf("%d verdict(s) differ:\n%s\n--- failures plain:\n%s\n--- failures instrumented:\n%s",
			len(diffs), strings.Join(diffs, "\n"), tail(plainOut), tail(instOut))
	}
	if !anyRecord(t, traces) {
		t.Error("the instrumented tests recorded no call: nothing was instrumented")
	}
	passed := 0
	for _, v := range plain {
		if v == "pass" {
			passed++
		}
	}
	t.Logf("%s (%s): go line %q kept, %d verdicts (%d pass) identical", m.path, m.exercises, line, len(plain), passed)
}

// copyModule is itest.CopyModule of m.
func copyModule(t *testing.T, m realModule) string {
	t.Helper()
	return itest.CopyModule(t, nil, m.path, m.version)
}

// testVerdicts runs `go test -json -count=1 ./...` (args name the command:
// go, or tigris go) and returns every test's and package's verdict and the
// output of the failures.
func testVerdicts(t *testing.T, dir string, env []string, exe string, args ...string) (map[string]string, []byte) {
	t.Helper()
	args = append(args, "-json", "-count=1", "./...")
	out, _ := itest.Run(t, dir, env, exe, args...) // failing tests are verdicts
	v, failed, err := compat.ParseTestJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(v) == 0 {
		t.Fatalf("%s %s reported no verdict:\n%s", filepath.Base(exe), strings.Join(args, " "), out)
	}
	return v, failed
}

// anyRecord reports whether a trace file in dir holds a fine record. It
// stops at the first: fine traces of whole test suites are large.
func anyRecord(t *testing.T, dir string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tgr"))
	for _, f := range files {
		r, err := writer.Open(f)
		if err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for {
			it, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reading %s: %v", f, err)
			}
			if it.Kind == writer.KindRecord {
				r.Close()
				return true
			}
		}
		r.Close()
	}
	return false
}

func tail(b []byte) []byte {
	const n = 4000
	if len(b) > n {
		return append([]byte("…"), b[len(b)-n:]...)
	}
	return b
}
