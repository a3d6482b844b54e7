package doccheck

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// petclinic is the example service's functions as a program built from it
// would list its probes: every function and method of its packages.
type petclinic []*engine.Probe

func (c petclinic) Probes() []*engine.Probe { return c }
func (c petclinic) Costs() engine.Costs     { return engine.Costs{} }

func petclinicProbes(t *testing.T) petclinic {
	t.Helper()
	const module = "github.com/tigrisgo/tigris/examples/petclinic"
	dir := filepath.Join(root, "examples", "petclinic")
	var out petclinic
	fset := token.NewFileSet()
	typ := func(e ast.Expr) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, e)
		return b.String()
	}
	list := func(fl *ast.FieldList) []string {
		var ts []string
		if fl == nil {
			return nil
		}
		for _, f := range fl.List {
			n := len(f.Names)
			if n == 0 {
				n = 1
			}
			for range n {
				ts = append(ts, typ(f.Type))
			}
		}
		return ts
	}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		pkg := module
		if rel != "." {
			pkg += "/" + filepath.ToSlash(rel)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			head, recv := pkg+"."+fd.Name.Name, ""
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				r := typ(fd.Recv.List[0].Type)
				recv = strings.TrimPrefix(r, "*")
				if i := strings.IndexByte(recv, '['); i >= 0 {
					recv = recv[:i]
				}
				if strings.HasPrefix(r, "*") {
					head = pkg + ".(*" + recv + ")." + fd.Name.Name
				} else {
					head = pkg + "." + recv + "." + fd.Name.Name
				}
			}
			sig := head + "(" + strings.Join(list(fd.Type.Params), ", ") + ")"
			if res := list(fd.Type.Results); len(res) == 1 {
				sig += " " + res[0]
			} else if len(res) > 1 {
				sig += " (" + strings.Join(res, ", ") + ")"
			}
			file := filepath.Base(path)
			line := fset.Position(fd.Pos()).Line
			out = append(out, &engine.Probe{ID: uint32(len(out) + 1), Function: engine.Symbol(sig), Package: pkg, Receiver: recv,
				Name: fd.Name.Name, Signature: sig, File: file, Line: line, Sig: engine.SignatureOf(sig, pkg, recv, fd.Name.Name, file, line),
				Mode: "off", Rate: -1})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// docQuery is one query docs/queries.md prints: a command's quoted query,
// or an sql block.
type docQuery struct {
	text    string
	refused bool // the page shows it refused: it can produce nothing
}

var (
	codeBlock = regexp.MustCompile("(?s)```(text|sh|sql)\n(.*?)```")
	commands  = regexp.MustCompile(`(?s)tigris (?:ctl )?query [^"\n]*"([^"]*)"`)
)

func docQueries(t *testing.T, page string) []docQuery {
	var out []docQuery
	for _, m := range codeBlock.FindAllStringSubmatch(page, -1) {
		if m[1] == "sql" {
			out = append(out, docQuery{text: m[2]})
			continue
		}
		for _, c := range commands.FindAllStringSubmatchIndex(m[2], -1) {
			text := m[2][c[2]:c[3]]
			if strings.Contains(text, "SELECT ...") {
				continue // a placeholder
			}
			rest := m[2][c[1]:]
			if i := strings.Index(rest, "\n$ "); i >= 0 {
				rest = rest[:i]
			}
			out = append(out, docQuery{text: text, refused: strings.Contains(rest, "query refused: it can produce nothing")})
		}
	}
	if len(out) < 15 {
		t.Fatalf("found %d queries on the page", len(out))
	}
	return out
}

// TestQueriesPageExamplesRun: every query docs/queries.md prints compiles
// and, planned against the example service's functions, can produce rows
// (its FINE actions switch probes); the one the page shows refused is
// refused. A query written with the page's elision '…/' taken literally
// matched nothing and waited forever.
func TestQueriesPageExamplesRun(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "queries.md"))
	if err != nil {
		t.Fatal(err)
	}
	cat := petclinicProbes(t)
	if len(cat) < 50 {
		t.Fatalf("%d functions in the example service", len(cat))
	}
	for _, d := range docQueries(t, string(data)) {
		qs, err := query.Compile(d.text, nil)
		if err != nil {
			t.Errorf("%s:\n%v", d.text, err)
			continue
		}
		for _, q := range qs {
			if q.Kind == query.KindStream {
				continue
			}
			p, err := engine.New(q, cat, engine.Limits{})
			if err != nil {
				t.Errorf("%s:\n%v", d.text, err)
				continue
			}
			if got := p.Nothing != ""; got != d.refused {
				t.Errorf("%s:\nproduces nothing: %q; the page shows it refused: %v", d.text, p.Nothing, d.refused)
			}
			if d.refused && !strings.Contains(normalize(string(data)), normalize("query refused: it can produce nothing, now or later: "+p.Nothing)) {
				t.Errorf("the page does not show the refusal as the code gives it: %s", p.Nothing)
			}
			for i, a := range q.Actions {
				if a.Pointcut != nil && len(p.Actions[i]) == 0 {
					t.Errorf("%s:\n%s matches no function", d.text, a.Text)
				}
			}
		}
	}
}
