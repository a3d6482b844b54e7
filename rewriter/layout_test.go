package rewriter

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// sources parses the package's non-test files other than doc.go, with
// comments.
func sources(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if files[name], err = parser.ParseFile(fset, name, nil, parser.ParseComments); err != nil {
			t.Fatal(err)
		}
	}
	return fset, files
}

// maxFileNote is the longest comment a file may hold outside declarations: a
// file comment of a line or two saying which part of the package it is, as in
// cmd/go's work package. Design notes belong in doc.go or
// docs/design-notes.md, where a reader of the package finds them.
const maxFileNote = 3

// TestDesignNotesInDocGo: no file keeps a design note between its imports and
// its first declaration (or anywhere outside a declaration).
func TestDesignNotesInDocGo(t *testing.T) {
	fset, files := sources(t)
	for name, f := range files {
		attached := map[*ast.CommentGroup]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch d := n.(type) {
			case *ast.GenDecl:
				attached[d.Doc] = true
			case *ast.FuncDecl:
				attached[d.Doc] = true
				return false // comments inside a body explain the body
			case *ast.TypeSpec:
				attached[d.Doc] = true
			case *ast.ValueSpec:
				attached[d.Doc] = true
			case *ast.Field:
				attached[d.Doc] = true
			}
			return true
		})
		for _, cg := range f.Comments {
			start, end := fset.Position(cg.Pos()), fset.Position(cg.End())
			inBody := false
			for _, d := range f.Decls {
				inBody = inBody || d.Pos() <= cg.Pos() && cg.End() <= d.End()
			}
			if !attached[cg] && !inBody && end.Line-start.Line+1 > maxFileNote {
				t.Errorf("%s:%d: a note of %d lines outside any declaration; move it to doc.go or docs/design-notes.md and leave a file comment of at most %d lines", name, start.Line, end.Line-start.Line+1, maxFileNote)
			}
		}
	}
}
