package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMatchDocsSayWhatItRuns: no user document says tigris match runs
// without building (it type-checks and compiles the packages the pointcuts
// may match); the README's quick start says what it does and how long it
// takes, and docs/pointcuts.md names each step and the columns of its table.
func TestMatchDocsSayWhatItRuns(t *testing.T) {
	noBuild := regexp.MustCompile(`(?i)\bno build\b|without building|does not build|doesn't build`)
	for _, rel := range userDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "tigris match") && noBuild.MatchString(line) {
				t.Errorf("%s:%d: says tigris match does not build; it compiles the packages it judges: %s", rel, i+1, line)
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	quick := regexp.MustCompile(`(?m)^tigris match \./\.\.\. .*#(.*)$`).FindSubmatch(readme)
	if quick == nil {
		t.Fatal("README.md: no quick-start line for tigris match ./...")
	}
	for _, want := range []*regexp.Regexp{regexp.MustCompile(`compiles`), regexp.MustCompile(`writes nothing`), regexp.MustCompile(`\d s\b`)} {
		if !want.Match(quick[1]) {
			t.Errorf("README.md, quick start: %q does not say /%s/", quick[1], want)
		}
	}
	pointcuts, err := os.ReadFile(filepath.Join(root, "docs", "pointcuts.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Checking a selection: `tigris match`",
		"`go list -export -deps`",
		"`-gcflags=-m=2`",
		"functions matched instrumented  package\n",
	} {
		if !strings.Contains(string(pointcuts), want) {
			t.Errorf("docs/pointcuts.md: no %q", want)
		}
	}
}
