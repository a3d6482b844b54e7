package rewriter

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const goImportcfg = `# import config
importmap golang.org/x/net/http/httpguts=vendor/golang.org/x/net/http/httpguts
packagefile fmt=/cache/fmt-d
packagefile vendor/golang.org/x/net/http/httpguts=/cache/httpguts-d
packagefile runtime=/cache/runtime-d
packageshlib shared/pkg=/lib/libshared.so`

func TestImportConfigMerge(t *testing.T) {
	c, err := parseImportConfig([]byte(goImportcfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"fmt", "runtime", "golang.org/x/net/http/httpguts", "vendor/golang.org/x/net/http/httpguts", "shared/pkg"} {
		if !c.has(p) {
			t.Errorf("has(%q) = false", p)
		}
	}
	n := c.addAll(map[string]string{
		"runtime":                        "/other/runtime-d", // listed: must not be replaced
		"golang.org/x/net/http/httpguts": "/other/httpguts",  // importable through importmap
		"github.com/tigrisgo/tigris/runtime/monitor": "/cache/monitor-d",
		"github.com/tigrisgo/tigris/runtime/writer":  "/cache/writer-d",
	})
	if n != 2 {
		t.Errorf("addAll added %d lines; want 2", n)
	}
	out := string(c.bytes())
	if !strings.HasPrefix(out, goImportcfg+"\n") {
		t.Errorf("the go command's lines were not kept verbatim:\n%s", out)
	}
	added := strings.TrimPrefix(out, goImportcfg+"\n")
	want := "# added by tigris\n" +
		"packagefile github.com/tigrisgo/tigris/runtime/monitor=/cache/monitor-d\n" +
		"packagefile github.com/tigrisgo/tigris/runtime/writer=/cache/writer-d\n"
	if added != want {
		t.Errorf("added lines:\n%s\nwant:\n%s", added, want)
	}
	// Parsing the result gives the go command's entries unchanged.
	again, err := parseImportConfig([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if again.packageFile["runtime"] != "/cache/runtime-d" || again.importMap["golang.org/x/net/http/httpguts"] != "vendor/golang.org/x/net/http/httpguts" {
		t.Errorf("merged config changed an existing entry: %v %v", again.packageFile, again.importMap)
	}
	// CompileJob.ImportCfg view: importmap applied.
	r := c.resolved()
	if r["golang.org/x/net/http/httpguts"] != "/cache/httpguts-d" || r["fmt"] != "/cache/fmt-d" {
		t.Errorf("resolved() = %v", r)
	}

	// Nothing added: the text is returned unchanged.
	c2, _ := parseImportConfig([]byte(goImportcfg))
	c2.add("fmt", "/x")
	if string(c2.bytes()) != goImportcfg {
		t.Errorf("no additions, but bytes() changed the text")
	}

	if _, err := parseImportConfig([]byte("packagefile broken\n")); err == nil {
		t.Error("malformed packagefile line: no error")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sub", "importcfg")
	if err := writeFileAtomic(name, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(name, []byte("b")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(name)
	entries, _ := os.ReadDir(filepath.Dir(name))
	if string(data) != "b" || len(entries) != 1 {
		t.Errorf("content %q, %d files in dir; want \"b\", 1", data, len(entries))
	}
}

// TestArchiveImports reads the import list of real archives from the build cache
// and compares it with what go list says the packages import.
func TestArchiveImports(t *testing.T) {
	goExe, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goExe, "list", "-export", "-f", "{{.ImportPath}}\t{{.Export}}\t{{join .Imports \" \"}}", "fmt", "net/url").Output()
	if err != nil {
		t.Skipf("go list -export: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		got, err := archiveImports(f[1])
		if err != nil {
			t.Fatalf("archiveImports(%s): %v", f[0], err)
		}
		want := strings.Fields(f[2])
		want = slices.DeleteFunc(want, func(s string) bool { return s == "unsafe" })
		slices.Sort(got)
		slices.Sort(want)
		// The object lists what the compiled code refers to; every import that
		// has code behind it is there.
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: archiveImports lacks %q: got %q", f[0], w, got)
			}
		}
		if found, err := fileMentions(f[1], []string{"go object "}); err != nil || !found {
			t.Errorf("fileMentions(%s) = %v, %v; want true", f[0], found, err)
		}
	}

	other := filepath.Join(t.TempDir(), "x.a")
	os.WriteFile(other, []byte("not an archive"), 0o666)
	if _, err := archiveImports(other); err != errObjectFormat {
		t.Errorf("archiveImports(non-archive) error = %v; want errObjectFormat", err)
	}
}

func TestModinfoPGO(t *testing.T) {
	info := "0w\xaf\f\x92t\b\x02A\xe1\xc1\a\xe6\xd6\x18\xe6path\texample.com/m\nbuild\t-buildmode=exe\nbuild\t-pgo=/src/app/default.pgo\nbuild\tGOOS=linux\n"
	cfg := "packagefile fmt=/x\nmodinfo " + strconv.Quote(info) + "\n"
	if got := modinfoPGO([]byte(cfg)); got != "/src/app/default.pgo" {
		t.Errorf("modinfoPGO = %q", got)
	}
	if got := modinfoPGO([]byte("packagefile fmt=/x\n")); got != "" {
		t.Errorf("modinfoPGO without modinfo = %q", got)
	}
}
