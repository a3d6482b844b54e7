package pointcut

import "testing"

func TestRestrict(t *testing.T) {
	repo := &Syntax{
		Path: "example.com/shop/repo",
		Decls: []Decl{
			{Recv: "Store", RecvPtr: true, Name: "Find"},
			{Recv: "Store", RecvPtr: true, Name: "Save"},
			{Name: "New"},
		},
		Idents: map[string]bool{"Store": true, "Find": true, "Save": true, "New": true, "Query": true, "db": true},
	}
	web := &Syntax{
		Path:   "example.com/shop/web",
		Decls:  []Decl{{Name: "Handle"}, {Recv: "Server", Name: "ServeHTTP"}},
		Idents: map[string]bool{"Handle": true, "Find": true, "ServeHTTP": true},
	}
	digest := func(expr string, s *Syntax) string {
		t.Helper()
		p, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		return p.Restrict(s)
	}
	// Selects nothing: "".
	for _, tc := range []struct {
		expr string
		s    *Syntax
	}{
		{"execution(* example.com/shop/repo.*(..))", web},
		{"execution(* example.com/shop/...Get*(..))", repo},
		{"execution(* example.com/shop/repo.(*Server).*(..))", repo},
		{"execution(* example.com/shop/repo.(*Store).New(..))", repo},
		{"execution(* example.com/shop/repo.Store.Find(..))", repo}, // value receivers only
		{"call(* *.Delete(..))", repo},
		{"within(example.com/shop/repo)", web},
		{"within(example.com/shop/repo.(*Client))", repo},
		{"execution(* example.com/shop/web.*(..)) && !within(example.com/shop/web)", web},
	} {
		if d := digest(tc.expr, tc.s); d != "" {
			t.Errorf("%s in %s: digest %s, want none", tc.expr, tc.s.Path, d)
		}
	}
	// Selects something: a digest.
	for _, tc := range []struct {
		expr string
		s    *Syntax
	}{
		{"execution(* example.com/shop/repo.*(..))", repo},
		{"execution(* example.com/shop/...Find(..))", repo},
		{"call(* *.Find(..))", web},
		{"call(* *.Qu*(..))", repo},
		{"within(example.com/shop/...)", web},
		{"execution(* *.*(..)) && exported()", web},
		{"execution(* main.*(..))", &Syntax{Path: "example.com/cmd/app", Main: true, Decls: []Decl{{Name: "main"}}}},
	} {
		if d := digest(tc.expr, tc.s); d == "" {
			t.Errorf("%s in %s: no digest, want one", tc.expr, tc.s.Path)
		}
	}
	// An edit that cannot change a package's selection leaves its digest alone.
	same := [][2]string{
		{"execution(* example.com/shop/...Find*(..))", "execution(* example.com/shop/...Find*(..)) || execution(* example.com/shop/web.Get*(..))"},
		{"execution(* example.com/shop/repo.*(..))", "execution(* example.com/shop/repo.*(..)) || within(example.com/shop/web)"},
		{"execution(* example.com/shop/repo.*(..)) && !execution(* *.String())", "execution(* example.com/shop/repo.*(..))"},
		{"within(example.com/shop/repo) || within(example.com/x)", "within(example.com/x) || within(example.com/shop/repo)"},
	}
	for _, pair := range same {
		if a, b := digest(pair[0], repo), digest(pair[1], repo); a != b {
			t.Errorf("in %s\n  %s\n  %s\nshould have one digest", repo.Path, pair[0], pair[1])
		}
	}
	// An edit that can change it changes it.
	differ := [][2]string{
		{"execution(* example.com/shop/...Find*(..))", "execution(* example.com/shop/...Save*(..))"},
		{"execution(* example.com/shop/repo.*(..))", "execution(* example.com/shop/repo.*(..)) && exported()"},
		{"execution(* example.com/shop/repo.*(..))", "execution(error example.com/shop/repo.*(..))"},
	}
	for _, pair := range differ {
		if a, b := digest(pair[0], repo), digest(pair[1], repo); a == b {
			t.Errorf("in %s\n  %s\n  %s\nshould have different digests", repo.Path, pair[0], pair[1])
		}
	}
}

// TestRestrictSound: whenever two expressions get the same digest for a
// package, they select the same functions and call sites of that package.
// Every pair of a pool of expressions is checked against signatures that fit
// the package's syntax.
func TestRestrictSound(t *testing.T) {
	s := &Syntax{
		Path:   "example.com/shop/repo",
		Decls:  []Decl{{Recv: "Store", RecvPtr: true, Name: "Find"}, {Recv: "Store", Name: "Len"}, {Name: "New"}, {Name: "parse"}},
		Idents: map[string]bool{"Find": true, "Len": true, "New": true, "parse": true, "Query": true, "Store": true},
	}
	fns := []*Signature{
		{Package: s.Path, Recv: "Store", RecvPtr: true, Name: "Find", Params: []string{"int"}, Results: []string{"string", "error"}, Flags: Exported | Method | ReturnsError},
		{Package: s.Path, Recv: "Store", Name: "Len", Results: []string{"int"}, Flags: Exported | Method},
		{Package: s.Path, Name: "New", Results: []string{"*example.com/shop/repo.Store"}, Flags: Exported},
		{Package: s.Path, Name: "parse", Params: []string{"string"}, Results: []string{"int", "error"}, Flags: ReturnsError},
	}
	callees := []*Signature{
		{Package: "database/sql", Recv: "DB", RecvPtr: true, Name: "Query", Params: []string{"string", "...any"}, Flags: Exported | Method | Variadic},
		fns[0], fns[2],
	}
	pool := []string{
		"execution(* example.com/shop/repo.*(..))",
		"execution(* example.com/shop/...*(..)) && !execution(* *.String())",
		"execution(* example.com/shop/repo.(*Store).*(..))",
		"execution(* example.com/shop/repo.Store.*(..))",
		"execution(* *.Find(..)) || execution(* *.Get(..))",
		"execution(* *.Find(..))",
		"within(example.com/shop/repo) && exported()",
		"within(example.com/shop/...)",
		"within(example.com/shop/repo.(*Store))",
		"within(example.com/other)",
		"call(* database/sql.(*DB).Query(..))",
		"call(* *.Query(..)) && within(example.com/shop/...)",
		"call(* *.Exec(..))",
		"execution(error *.*(..)) || call(* *.New(..))",
		"execution(* *.*(..)) && returns_error()",
		"execution(* *.*(int))",
		"!within(example.com/shop/repo) && execution(* *.*(..))",
	}
	pcs := make([]*Pointcut, len(pool))
	for i, e := range pool {
		p, err := Parse(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		pcs[i] = p
	}
	selects := func(p *Pointcut) []bool {
		var out []bool
		for _, f := range fns {
			out = append(out, p.MatchExecution(f))
			for _, c := range callees {
				out = append(out, p.MatchCall(c, f))
			}
		}
		return out
	}
	for i := range pcs {
		si := selects(pcs[i])
		// What a planned compile parses instead of the config selects the same.
		if g := pcs[i].Restrict(s); g != "" {
			q, err := ParseGraph(g)
			if err != nil {
				t.Fatalf("%s: ParseGraph(%q): %v", pool[i], g, err)
			}
			if again := q.Restrict(s); again != g {
				t.Errorf("%s: the graph read back restricts to\n%s, want\n%s", pool[i], again, g)
			}
			for k, b := range selects(q) {
				if b != si[k] {
					t.Errorf("%s: its restriction read back selects differently (join point %d)", pool[i], k)
					break
				}
			}
		}
		if pcs[i].Restrict(s) == "" {
			for _, b := range si {
				if b {
					t.Errorf("%s: no digest, but it selects something", pool[i])
				}
			}
		}
		for j := range pcs {
			if pcs[i].Restrict(s) != pcs[j].Restrict(s) {
				continue
			}
			sj := selects(pcs[j])
			for k := range si {
				if si[k] != sj[k] {
					t.Errorf("%s and %s have one digest but select differently", pool[i], pool[j])
					break
				}
			}
		}
	}
}
