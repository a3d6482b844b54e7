package rewriter

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tigrisgo/tigris/internal/sorted"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// Each testdata/golden/*.txtar is one case: tigris.yaml, the package's input files
// under in/, and the expected output under want/ (rewritten files and the probe
// table). The archive comment's first line is the package's import path. Every
// case's output is also compiled, against the portable monitor, in one go build.
func TestGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/golden/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	rt, _ := filepath.Abs("../runtime")
	mod := t.TempDir()
	writeFile(t, filepath.Join(mod, "go.mod"), "module golden.test\n\ngo 1.24\n\nrequire github.com/tigrisgo/tigris/runtime v0.0.0\n\nreplace github.com/tigrisgo/tigris/runtime => "+rt+"\n")
	sum, _ := os.ReadFile(filepath.Join(rt, "go.sum"))
	writeFile(t, filepath.Join(mod, "go.sum"), string(sum))
	for _, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c), ".txtar")
		t.Run(name, func(t *testing.T) {
			runGolden(t, c, filepath.Join(mod, name))
		})
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rewritten output does not compile: %v\n%s", err, out)
	}
}

func runGolden(t *testing.T, archive, outDir string) {
	ar, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	importPath := strings.TrimSpace(strings.SplitN(string(ar.Comment), "\n", 2)[0])
	dir := t.TempDir()
	var inputs []string
	want := map[string]string{}
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "in/"):
			p := filepath.Join(dir, strings.TrimPrefix(f.Name, "in/"))
			writeFile(t, p, string(f.Data))
			inputs = append(inputs, p)
		case strings.HasPrefix(f.Name, "want/"):
			want[strings.TrimPrefix(f.Name, "want/")] = string(f.Data)
		default:
			writeFile(t, filepath.Join(dir, f.Name), string(f.Data))
		}
	}
	s, err := NewSession(SessionOptions{ConfigPath: filepath.Join(dir, "tigris.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	job := &CompileJob{ImportPath: importPath, Files: append([]string(nil), inputs...), WorkDir: work, Complete: true, ImportCfg: stdImportCfg(t)}
	if _, err := s.Instrument(job); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range job.Files {
		if !strings.HasPrefix(f, work) {
			continue // unchanged input
		}
		data, _ := os.ReadFile(f)
		got[filepath.Base(f)] = lineDirective.ReplaceAllString(string(data), "//line $$IN/$1:$2")
	}
	if *update {
		ar.Files = ar.Files[:0:0]
		for _, f := range mustParse(t, archive).Files {
			if !strings.HasPrefix(f.Name, "want/") {
				ar.Files = append(ar.Files, f)
			}
		}
		for _, name := range sorted.Keys(got) {
			ar.Files = append(ar.Files, txtar.File{Name: "want/" + name, Data: []byte(got[name])})
		}
		writeFile(t, archive, string(txtar.Format(ar)))
		return
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s differs from golden (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected output file %s", name)
		}
	}
	// Assemble the output as a package of the compile-check module: rewritten files
	// replace their inputs, untouched inputs are copied as they are.
	for _, f := range job.Files {
		data, _ := os.ReadFile(f)
		// The go command ignores files named _*, the compiler does not.
		writeFile(t, filepath.Join(outDir, strings.TrimLeft(filepath.Base(f), "_")), string(data))
	}
}

var lineDirective = regexp.MustCompile(`//line [^\n]*/([^/\n]+):([0-9]+)`)

var (
	stdCfgOnce sync.Once
	stdCfg     map[string]string
	stdCfgErr  error
)

// stdImportCfg resolves export data for the std packages golden inputs import.
func stdImportCfg(t *testing.T) map[string]string {
	stdCfgOnce.Do(func() {
		out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}",
			"fmt", "errors", "context", "os", "strings", "sort", "sync", "net/http").Output()
		if err != nil {
			stdCfgErr = err
			return
		}
		stdCfg = map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && v != "" {
				stdCfg[k] = v
			}
		}
	})
	if stdCfgErr != nil {
		t.Skipf("go list -export: %v", stdCfgErr)
	}
	return stdCfg
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustParse(t *testing.T, path string) *txtar.Archive {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return ar
}
