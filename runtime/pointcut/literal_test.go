package pointcut

import (
	"testing"
)

// Function literals as the rewriter describes them: the enclosing function's
// package, receiver and Go name, the rest of the literal's Go name in Lit, its
// own parameters and results.
var (
	handlerLit = &Signature{ // example.com/shop/web.NewHandler.func1
		Package: "example.com/shop/web", Name: "NewHandler", Lit: ".func1",
		Params: []string{"net/http.ResponseWriter", "*net/http.Request"},
		Flags:  Literal,
	}
	nestedLit = &Signature{ // example.com/shop/web.(*Server).routes.func2.1
		Package: "example.com/shop/web", Recv: "Server", RecvPtr: true, Name: "routes", Lit: ".func2.1",
		Params:  []string{"context.Context"},
		Results: []string{"error"},
		Flags:   Literal | ReturnsError,
	}
	valueRecvLit = &Signature{ // example.com/shop/web.Server.Close.func1
		Package: "example.com/shop/web", Recv: "Server", Name: "Close", Lit: ".func1",
		Flags: Literal,
	}
	genericLit = &Signature{ // example.com/x.Map[...].func1
		Package: "example.com/x", Name: "Map", Lit: ".func1",
		Params: []string{"T"},
		Flags:  Literal | Generic,
	}
	initLit = &Signature{ // example.com/x.init.0.func1
		Package: "example.com/x", Name: "init.0", Lit: ".func1",
		Flags: Literal,
	}
	globalLit = &Signature{ // example.com/x.init.func2: a package-level initializer's
		Package: "example.com/x", Name: "init", Lit: ".func2",
		Flags: Literal,
	}
	rangeLit = &Signature{ // example.com/x.Walk-range1.1 (Go 1.27)
		Package: "example.com/x", Name: "Walk", Lit: "-range1.1",
		Flags: Literal,
	}
	// A method whose name looks like a literal's.
	oddMethod = &Signature{
		Package: "example.com/shop/web", Recv: "Server", Name: "func1",
		Flags: Method,
	}
	webNewHandler = &Signature{
		Package: "example.com/shop/web", Name: "NewHandler",
		Results: []string{"net/http.Handler"},
		Flags:   Exported,
	}
)

func TestMatchLiterals(t *testing.T) {
	tests := []struct {
		expr string
		sig  *Signature
		want bool
	}{
		// A literal by the name Go gives it.
		{`execution(* example.com/shop/web.NewHandler.func1(..))`, handlerLit, true},
		{`execution(* example.com/shop/web.NewHandler.func2(..))`, handlerLit, false},
		{`execution(* example.com/shop/web.(*Server).routes.func2.1(..))`, nestedLit, true},
		{`execution(* example.com/shop/web.(*Server).routes.func2(..))`, nestedLit, false},
		{`execution(* example.com/shop/web.Server.Close.func1(..))`, valueRecvLit, true},
		{`execution(* example.com/shop/web.Server.Close.func1(..))`, nestedLit, false},
		{`execution(* example.com/x.Map[...].func1(..))`, genericLit, true},
		{`execution(* example.com/x.Map.func1(..))`, genericLit, true},
		{`execution(* example.com/x.init.0.func1(..))`, initLit, true},
		{`execution(* example.com/x.init.1.func1(..))`, initLit, false},
		{`execution(* example.com/x.init.func2(..))`, globalLit, true},
		{`execution(* example.com/x.Walk-range1.1(..))`, rangeLit, true},

		// Globs: in the literal part "*" matches the dots of nested literals.
		{`execution(* example.com/shop/web.(*Server).routes.func*(..))`, nestedLit, true},
		{`execution(* example.com/shop/web.(*Server).routes.func2.*(..))`, nestedLit, true},
		{`execution(* example.com/shop/web.(*Server).routes.func1.*(..))`, nestedLit, false},
		{`execution(* example.com/shop/web.*.func*(..))`, handlerLit, true},
		{`execution(* example.com/shop/web.*.func*(..))`, nestedLit, true},
		{`execution(* example.com/shop/...*.func*(..))`, nestedLit, true},
		{`execution(* example.com/shop/...*.func*(..))`, rangeLit, false},
		{`execution(* example.com/x.Walk-range*(..))`, rangeLit, true},
		{`execution(* example.com/...*-range*(..))`, rangeLit, true},
		{`execution(* example.com/...*-range*(..))`, handlerLit, false},
		{`execution(* example.com/x.init*.func*(..))`, initLit, true},

		// By signature.
		{`execution(* example.com/shop/...*.func*(net/http.ResponseWriter, *net/http.Request))`, handlerLit, true},
		{`execution(* example.com/shop/...*.func*(net/http.ResponseWriter, *net/http.Request))`, nestedLit, false},
		{`execution(error example.com/shop/...*.func*(context.Context))`, nestedLit, true},
		{`args(context.Context, ..) && literal()`, nestedLit, true},
		{`args(context.Context, ..) && literal()`, handlerLit, false},

		// By the function it is written in: its package and receiver.
		{`within(example.com/shop/...) && literal()`, handlerLit, true},
		{`within(example.com/shop/web.(*Server)) && literal()`, nestedLit, true},
		{`within(example.com/shop/web.(*Server)) && literal()`, handlerLit, false},
		{`within(example.com/x) && literal()`, handlerLit, false},
		{`literal() && generic()`, genericLit, true},
		{`literal()`, rangeLit, true},

		// What selected no literal before still selects none: a literal is
		// selected only through a literal term.
		{`execution(* example.com/shop/...*(..))`, handlerLit, false},
		{`execution(* example.com/shop/web.NewHandler(..))`, handlerLit, false},
		{`within(example.com/shop/...)`, handlerLit, false},
		{`all()`, handlerLit, false},
		{`!execution(* example.com/x.F(..))`, handlerLit, false},
		{`!literal()`, handlerLit, false},
		{`within(example.com/shop/...) && !literal()`, handlerLit, false},
		{`!execution(* example.com/shop/web.NewHandler.func1(..))`, handlerLit, false},
		{`literal() && !execution(* example.com/shop/web.NewHandler.func1(..))`, handlerLit, false},
		{`literal() && !execution(* example.com/shop/web.NewHandler.func1(..))`, nestedLit, true},

		// Declared functions are matched as before: a literal part never
		// matches them.
		{`execution(* example.com/shop/web.NewHandler.func*(..))`, webNewHandler, false},
		{`literal()`, webNewHandler, false},
		{`execution(* example.com/shop/...*(..)) && !literal()`, webNewHandler, true},
		{`execution(* example.com/shop/...*(..)) || literal()`, webNewHandler, true},
		// A method named like a literal is written with its receiver in
		// parentheses; without them the name is a literal's.
		{`execution(* example.com/shop/web.(Server).func1(..))`, oddMethod, true},
		{`execution(* example.com/shop/web.Server.func1(..))`, oddMethod, false},
		{`execution(* example.com/shop/web.Server.func1(..))`, valueRecvLit, false},
	}
	for _, tt := range tests {
		p, err := Parse(tt.expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		if got := p.MatchExecution(tt.sig); got != tt.want {
			t.Errorf("%s\n  on %s: got %v, want %v", tt.expr, tt.sig, got, tt.want)
		}
		// The canonical text means the same.
		q, err := Parse(p.String())
		if err != nil {
			t.Errorf("Parse(%q), the canonical text of %q: %v", p.String(), tt.expr, err)
			continue
		}
		if got := q.MatchExecution(tt.sig); got != tt.want {
			t.Errorf("%s (canonical %s)\n  on %s: got %v, want %v", tt.expr, p.String(), tt.sig, got, tt.want)
		}
	}
}

func TestLiteralCanonical(t *testing.T) {
	for expr, want := range map[string]string{
		`execution(example.com/shop/web.NewHandler.func1(..))`:           `execution(* example.com/shop/web.NewHandler.func1(..))`,
		`execution(* example.com/shop/web.(*Server).routes.func2.1(..))`: `execution(* example.com/shop/web.(*Server).routes.func2.1(..))`,
		`execution(* example.com/x.init.0.func1(..))`:                    `execution(* example.com/x.init.0.func1(..))`,
		`execution(* example.com/shop/....*.func*(..))`:                  `execution(* example.com/shop/...*.func*(..))`,
		`execution(* example.com/x.Map[T].func1(..))`:                    `execution(* example.com/x.Map[...].func1(..))`,
		`execution(* example.com/x.Walk-range1.1(..))`:                   `execution(* example.com/x.Walk-range1.1(..))`,
		`execution(* example.com/shop/web.(Server).func1(..))`:           `execution(* example.com/shop/web.(Server).func1(..))`,
		`within(example.com/shop/...)&&literal()`:                        `within(example.com/shop/...) && literal()`,
	} {
		p, err := Parse(expr)
		if err != nil {
			t.Errorf("Parse(%q): %v", expr, err)
			continue
		}
		if got := p.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", expr, got, want)
		}
	}
}

func TestLiteralErrors(t *testing.T) {
	for expr, want := range map[string]string{
		`execution(* example.com/x.F.func1.x(..))`:    "", // a glob-free element after a literal's: allowed, matches nothing Go names
		`execution(* example.com/x.(*T).M.x(..))`:     `1:33: expected a function literal's name after the function's, func and its number: .func1, .func2.1, or a glob such as .func*; got .x`,
		`execution(* example.com/x.(*T).0.func1(..))`: `1:27: expected a function name before .0 (init.0 is the first func init)`,
	} {
		_, err := Parse(expr)
		switch {
		case want == "" && err != nil:
			t.Errorf("Parse(%q): %v", expr, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("Parse(%q): got error %v, want %s", expr, err, want)
		}
	}
}

func TestNamesExactlyLiteral(t *testing.T) {
	for expr, want := range map[string]bool{
		`execution(* example.com/shop/web.NewHandler.func1(..))`: true,
		`execution(* example.com/shop/web.NewHandler.func*(..))`: false,
		`within(example.com/shop/web) && literal()`:              false,
	} {
		p, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.NamesExactly(handlerLit); got != want {
			t.Errorf("%s: NamesExactly = %v, want %v", expr, got, want)
		}
	}
}

func TestMatchLiteralAllocs(t *testing.T) {
	p, err := Parse(`execution(* example.com/shop/...*.func*(..)) || within(example.com/shop/...) && literal() && !generic()`)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { p.MatchExecution(nestedLit) }); n != 0 {
		t.Errorf("got %v alloc(s); want 0", n)
	}
}

// A package-level initializer's literal (init.func1) is written in no
// declared function, so Restrict keeps a literal pattern whatever the
// declarations, and its graph reads back to a pointcut that selects the same.
func TestRestrictLiteral(t *testing.T) {
	x := &Syntax{Path: "example.com/x", Decls: []Decl{{Name: "Map"}}, Idents: map[string]bool{"Map": true}}
	for _, expr := range []string{
		`execution(* example.com/x.init.func2(..))`,
		`within(example.com/x) && literal()`,
	} {
		p, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if !p.MayMatchPackage("example.com/x") {
			t.Errorf("%s: MayMatchPackage(example.com/x) = false", expr)
		}
		text := p.Restrict(x)
		if text == "" {
			t.Errorf("%s: Restrict says it selects nothing in example.com/x", expr)
			continue
		}
		q, err := ParseGraph(text)
		if err != nil {
			t.Fatalf("%s: ParseGraph(%q): %v", expr, text, err)
		}
		if !q.MatchExecution(globalLit) {
			t.Errorf("%s: the restricted pointcut %q does not select %s", expr, text, globalLit)
		}
	}
}

func TestSplitLiteral(t *testing.T) {
	for name, want := range map[string][2]string{
		"NewHandler.func1":  {"NewHandler", ".func1"},
		"init.0.func2.1":    {"init.0", ".func2.1"},
		"init.func3":        {"init", ".func3"},
		"Walk-range1.1":     {"Walk", "-range1.1"},
		"Walk.func1-range2": {"Walk", ".func1-range2"},
		"Find":              {"Find", ""},
	} {
		if fn, lit := SplitLiteral(name); fn != want[0] || lit != want[1] {
			t.Errorf("SplitLiteral(%q) = %q, %q; want %q, %q", name, fn, lit, want[0], want[1])
		}
	}
}
