package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// issueRef is a reference to one of the project's own issues: "issue 21",
// "issues 18–26", "Issue #7", and the same run together in a name
// ("issue21-full-table.txt", "the issue-21 branch").
var issueRef = regexp.MustCompile(`(?i)\bissues?[ _-]?#?[0-9]+`)

// hashRef is a bare "#21" in prose, GitHub's short form of the same. Fenced
// code blocks are left out: a program's output may number things so
// ("Span #0" in a Collector's debug log).
var hashRef = regexp.MustCompile(`(?:^|[\s(\[])#[0-9]+\b`)

// fence opens or closes a fenced code block.
var fence = regexp.MustCompile("(?m)^\\s*(```|~~~)")

// userDocs returns the documents written for users: README.md,
// ARCHITECTURE.md and docs/*.md, by their paths from the root.
func userDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 10 {
		t.Fatalf("found %d pages in docs/; has the folder moved?", len(docs))
	}
	out := []string{"README.md", "ARCHITECTURE.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// outsideFences returns text with the lines of fenced code blocks blanked,
// so line numbers stay those of the file.
func outsideFences(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if fence.MatchString(l) {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// lineOf is the 1-based line of offset in text.
func lineOf(text string, offset int) int { return strings.Count(text[:offset], "\n") + 1 }

// TestUserDocsCiteNoIssues: the documents a user reads say what they mean
// without the project's internal issue numbers ("since issue 21", "(#18)",
// perf/issue21-….txt), which mean nothing to someone outside it: name the
// change, the round or the date instead.
func TestUserDocsCiteNoIssues(t *testing.T) {
	for _, rel := range userDocs(t) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, loc := range issueRef.FindAllStringIndex(text, -1) {
			t.Errorf("%s:%d: %q cites an issue number; say what the change was instead", rel, lineOf(text, loc[0]), text[loc[0]:loc[1]])
		}
		prose := outsideFences(text)
		for _, loc := range hashRef.FindAllStringIndex(prose, -1) {
			t.Errorf("%s:%d: %q cites an issue number; say what the change was instead", rel, lineOf(prose, loc[0]), strings.TrimSpace(prose[loc[0]:loc[1]]))
		}
	}
}

// historyHeading is a heading of a lab notebook rather than of results: an
// earlier round, a before/after, a first cut.
var historyHeading = regexp.MustCompile(`(?i)\b(round|rounds|before|after|earlier|history|first cut|then)\b`)

// roundHeading is a heading that tells one of the rounds: those belong on
// the history page, wherever they would stand.
var roundHeading = regexp.MustCompile(`(?i)\brounds?\b|first cut`)

// TestPerformancePageLeadsWithResults: docs/performance.md tells a user what
// their code pays now. Its title names no issue, its first section is not
// the story of an earlier round, and the rounds live on the history page it
// links to.
func TestPerformancePageLeadsWithResults(t *testing.T) {
	const page, history = "docs/performance.md", "docs/performance-history.md"
	data, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	title, _, _ := strings.Cut(text, "\n")
	if !strings.HasPrefix(title, "# ") {
		t.Fatalf("%s does not begin with a title: %q", page, title)
	}
	if strings.Contains(strings.ToLower(title), "issue") {
		t.Errorf("%s: the title %q speaks of an issue; it should say what is measured", page, title)
	}
	var headings []string
	for _, l := range strings.Split(outsideFences(text), "\n") {
		if strings.HasPrefix(l, "## ") {
			headings = append(headings, strings.TrimPrefix(l, "## "))
		}
	}
	if len(headings) < 3 {
		t.Fatalf("%s has %d sections; its format changed?", page, len(headings))
	}
	if historyHeading.MatchString(headings[0]) {
		t.Errorf("%s begins with %q: begin with the current results and move earlier rounds to %s", page, headings[0], history)
	}
	for _, h := range headings {
		if roundHeading.MatchString(h) {
			t.Errorf("%s has a section %q: the rounds belong on %s", page, h, history)
		}
	}
	if !strings.Contains(text, "(performance-history.md") {
		t.Errorf("%s does not link to its history page (performance-history.md)", page)
	}
	if _, err := os.Stat(filepath.Join(root, history)); err != nil {
		t.Errorf("%s: %v", page, err)
	}
}
