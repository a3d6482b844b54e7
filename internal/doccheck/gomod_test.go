package doccheck

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/tempmod"
	"github.com/tigrisgo/tigris/setup"
)

// requirementDocs are the paragraphs that tell a user what tigris init adds
// to their go.mod, each found by the words it starts with.
var requirementDocs = []struct{ file, start string }{
	{"README.md", "`tigris init` adds two requirements to your go.mod"},
	{"docs/compatibility.md", "`tigris init` adds two requirements to a user's go.mod"},
	{"docs/config.md", "3. Makes go.mod require the runtime module"},
}

// onlyClaim is the sentence that once said a user's module requires nothing
// but the runtime; its go.mod also requires participle, indirectly.
var onlyClaim = regexp.MustCompile(`(?i)(module|go\.mod)\s+requires\s+only\b`)

// TestDocsSayWhatInitRequires runs tigris init on a fresh module (with this
// checkout's runtime, through the replace init writes, and nothing fetched)
// and checks that each paragraph of requirementDocs names every module the
// go.mod it leaves requires, and says "indirect" where go.mod does; and that
// no user document claims the module requires only one thing.
func TestDocsSayWhatInitRequires(t *testing.T) {
	dir := tempmod.Write(t, map[string]string{
		"go.mod":       "module example.com/fresh\n\ngo 1.22\n",
		"calc/calc.go": "package calc\n\nfunc Sum(n int) int { return n }\n",
	})
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOPROXY", "off")
	var out bytes.Buffer
	if err := setup.Run(context.Background(), setup.Options{Dir: dir, RuntimeDir: filepath.Join(root, "runtime"), Out: &out, Err: &out}); err != nil {
		t.Fatalf("tigris init: %v\n%s", err, out.String())
	}
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(js, &mod); err != nil {
		t.Fatal(err)
	}
	if len(mod.Require) == 0 {
		t.Fatalf("tigris init required nothing:\n%s", out.String())
	}

	for _, d := range requirementDocs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d.file)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		i := strings.Index(text, d.start)
		if i < 0 {
			t.Errorf("%s: no paragraph starts %q (the paragraph that says what tigris init adds to go.mod; update requirementDocs if it moved)", d.file, d.start)
			continue
		}
		para := text[i:]
		if j := strings.Index(para, "\n\n"); j >= 0 {
			para = para[:j]
		}
		for _, r := range mod.Require {
			if !strings.Contains(para, r.Path) {
				t.Errorf("%s:%d: the paragraph on what tigris init adds does not name %s, which init's go.mod requires", d.file, lineOf(text, i), r.Path)
			}
			if r.Indirect && !strings.Contains(para, "indirect") {
				t.Errorf("%s:%d: the paragraph on what tigris init adds does not say %s is required as indirect", d.file, lineOf(text, i), r.Path)
			}
		}
	}
	for _, rel := range userDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, loc := range onlyClaim.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d: %q: tigris init's go.mod requires %d modules; say which (as in README.md)", rel, lineOf(text, loc[0]), text[loc[0]:loc[1]], len(mod.Require))
		}
	}
}
