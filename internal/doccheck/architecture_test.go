package doccheck

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, seen from this package.
const root = "../.."

// mapRow is one row of ARCHITECTURE.md's code map: a folder and what it is.
var mapRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_/.-]+)` \\| ([^|]+) \\|")

// named finds every folder ARCHITECTURE.md names in backquotes.
var named = regexp.MustCompile("`([a-z0-9_.-]+(?:/[a-z0-9_.-]+)*)/?`")

// TestArchitectureFoldersHaveDocGo: ARCHITECTURE.md stays under 150 lines;
// every folder it names that holds Go files has a doc.go carrying the
// package comment (and no other file does); and the first sentence of that
// comment says what the code map's row says: every word of the row's "what"
// (except the small ones) appears in it, so the map and the package cannot
// drift apart without this test noticing.
func TestArchitectureFoldersHaveDocGo(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if n := strings.Count(text, "\n"); n >= 150 {
		t.Errorf("ARCHITECTURE.md has %d lines; keep it under 150", n)
	}
	rows := map[string]string{}
	for _, m := range mapRow.FindAllStringSubmatch(text, -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("ARCHITECTURE.md: two rows for %s", m[1])
		}
		rows[m[1]] = m[2]
	}
	if len(rows) < 20 {
		t.Fatalf("ARCHITECTURE.md: found %d code map rows; the table's format changed?", len(rows))
	}
	folders := 0
	for _, m := range named.FindAllStringSubmatch(text, -1) {
		dir := filepath.Join(root, filepath.FromSlash(m[1]))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		if _, ok := rows[m[1]]; !ok {
			rows[m[1]] = "" // named in prose: a doc.go, nothing to compare
		}
	}
	for folder, what := range rows {
		dir := filepath.Join(root, filepath.FromSlash(folder))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("ARCHITECTURE.md names %s, which is not a folder", folder)
			continue
		}
		goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		if len(goFiles) == 0 {
			continue // a module's root, say
		}
		folders++
		synopsis, ok := packageDoc(t, dir)
		if !ok {
			continue
		}
		if missing := missingWords(what, synopsis); len(missing) > 0 {
			t.Errorf("%s: ARCHITECTURE.md says %q, but the first sentence of its doc.go, %q, does not say %s", folder, strings.TrimSpace(what), synopsis, strings.Join(missing, ", "))
		}
	}
	if folders < 20 {
		t.Errorf("checked %d folders; the code map names more", folders)
	}
}

// packageDoc returns the first sentence of the package comment of dir's
// doc.go, and reports (as test errors) a missing doc.go, a doc.go without the
// comment, or a package comment in another file.
func packageDoc(t *testing.T, dir string) (string, bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	synopsis, found, misplaced := "", false, false
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Error(err)
			return "", false
		}
		base := filepath.Base(name)
		switch {
		case base == "doc.go" && f.Doc == nil:
			t.Errorf("%s has no package comment", name)
		case base == "doc.go":
			synopsis, found = (&doc.Package{}).Synopsis(f.Doc.Text()), true
		case f.Doc != nil && isPackageComment(f.Doc):
			t.Errorf("%s: the package comment belongs in doc.go", name)
			misplaced = true
		}
	}
	if !found && !misplaced {
		t.Errorf("%s has no doc.go", dir)
	}
	return synopsis, found
}

// isPackageComment tells a package comment from a build constraint or a
// file comment above the package clause.
func isPackageComment(cg *ast.CommentGroup) bool {
	text := cg.Text()
	return strings.HasPrefix(text, "Package ") || strings.HasPrefix(text, "Command ")
}

// small are the words a row may use that its package's sentence need not.
var small = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "of": true, "in": true, "on": true,
	"to": true, "its": true, "it": true, "is": true, "by": true, "for": true, "with": true, "as": true,
	"at": true, "be": true, "but": true, "from": true, "into": true, "their": true, "each": true,
	"one": true, "only": true, "no": true, "never": true, "not": true, "w/o": true,
}

// word is a word of a row: letters, digits and the joiners of names.
var word = regexp.MustCompile(`[\pL\pN_*./-]+[\pL\pN_*]|[\pL\pN]`)

// missingWords returns the words of what that sentence does not contain
// (case-insensitive; a word inside a longer one counts, so "writer" is in
// "writers").
func missingWords(what, sentence string) []string {
	sentence = strings.ToLower(strings.ReplaceAll(sentence, "`", ""))
	var missing []string
	for _, w := range word.FindAllString(strings.ToLower(what), -1) {
		if !small[w] && !strings.Contains(sentence, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// TestEveryPackageHasDocGo: every package of the two tigris modules keeps its
// package comment in doc.go. The examples are programs for users to read,
// modules of their own, and are left out.
func TestEveryPackageHasDocGo(t *testing.T) {
	dirs := 0
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() && path != root && (name == "testdata" || name == "examples" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if !e.IsDir() {
			return nil
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs++
			packageDoc(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dirs < 30 {
		t.Errorf("found %d packages; the walk missed some", dirs)
	}
}

// initAllowed are the init functions of non-test code, with why each is not
// a registration.
var initAllowed = map[string]string{
	"runtime/monitor/fine.go": "sets the sampling threshold to every call before any probe can run",
}

// TestNoRegistrationByInit keeps ARCHITECTURE.md's invariant that what a
// binary links beside the monitor is named in its generated probe tables
// (monitor.Links), and plug-ins in general are values passed in a list: no
// non-test code outside the examples has an init function but those
// initAllowed explains. (Generated probe tables register the package's
// probes from init; they are not in the repository.)
func TestNoRegistrationByInit(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != root && (name == "testdata" || name == "examples" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
				seen[rel] = true
				if _, ok := initAllowed[rel]; !ok {
					t.Errorf("%s: func init; pass what it would register as a value (monitor.Links, a list handed to the caller)", rel)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range initAllowed {
		if !seen[rel] {
			t.Errorf("initAllowed names %s, which has no init function any more", rel)
		}
	}
}
