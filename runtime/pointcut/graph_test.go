package pointcut

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseGraphSharing: a chain of names restricts to a graph linear in its
// length, and reading it back keeps the sharing (the expansion is 6142 terms,
// the text a line a node).
func TestParseGraphSharing(t *testing.T) {
	env, err := NewEnv(chain(11, "||"))
	require.NoError(t, err)
	p, _, _ := env.Lookup("a11")
	s := &Syntax{Path: "example.com/x", Decls: []Decl{{Name: "F"}}, Idents: map[string]bool{"F": true}}
	g := p.Restrict(s)
	require.NotEmpty(t, g)
	assert.Equal(t, 23, strings.Count(g, "\n"), "one line a node: the leaf, and a ! and a || per link")
	q, err := ParseGraph(g)
	require.NoError(t, err)
	assert.Equal(t, p.Terms(), q.Terms())
	assert.Equal(t, g, q.Restrict(s))
	assert.True(t, q.MatchExecution(&Signature{Package: "example.com/x", Name: "F"}))
}

func TestParseGraphEmpty(t *testing.T) {
	p, err := ParseGraph("")
	require.NoError(t, err)
	assert.False(t, p.MatchExecution(&Signature{Package: "x", Name: "F"}), "no restriction selects nothing")
}

// TestParseGraphErrors: a damaged graph is refused with the line and what is
// wrong in it, never read as another selection.
func TestParseGraphErrors(t *testing.T) {
	leaf := `0 5 "execution(* x.F(..))"` + "\n"
	for _, tc := range []struct{ text, want string }{
		{"x 5 \"all()\"", `line 1: id "x", want 0`},
		{"1 5 \"all()\"", `line 1: id "1", want 0`},
		{"0 11 \"all()\"", `line 1: operator "11" is not one of 0 to 10`},
		{"0 5 execution", `line 1: operand "execution" of operator 5 is not a quoted term`},
		{`0 5 "execution(x"`, `line 1: term "execution(x"`},
		{`0 5 "all()"`, `line 1: "all()" is not a single term of operator 5`},
		{`0 5 "execution(* x.F(..)) || all()"`, "is not a single term"},
		{leaf + "1 2 0", "line 2: && and || take two operands or more, not 1"},
		{leaf + "1 4 0 0", "line 2: ! takes one operand, not 2"},
		{leaf + "1 3 0 1", `line 2: operand "1" is not the id of an earlier line`},
		{leaf + "1 3 0 -1", `line 2: operand "-1" is not the id of an earlier line`},
	} {
		_, err := ParseGraph(tc.text)
		if assert.Error(t, err, "%q", tc.text) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
}

// TestParseGraphBounded: a graph that doubles with every line is refused at
// the line that crosses MaxTerms.
func TestParseGraphBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`0 5 "execution(* x.F(..))"` + "\n")
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "%d 3 %d %d\n", i, i-1, i-1)
	}
	_, err := ParseGraph(b.String())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 14: expands to more than 10000 terms")
}

// FuzzParseGraph: any text is refused or read as a graph whose restriction
// writes back to a text that reads the same; allocation stays linear in the
// input (each leaf costs a parse, about 80 kB, and a leaf takes at least
// eight bytes of text).
func FuzzParseGraph(f *testing.F) {
	ParseGraph(`0 5 "all()"`) // the parser is built on first use
	f.Add(`0 5 "execution(* x.F(..))"` + "\n1 4 0\n2 3 0 1\n")
	f.Add(`0 8 "within(example.com/shop/...)"` + "\n" + `1 10 "exported()"` + "\n2 2 0 1\n")
	f.Add(`0 6 "call(* *.Query(..))"` + "\n" + `1 9 "args(int, ..)"` + "\n2 2 0 1\n3 1 \"all()\"\n")
	s := &Syntax{Path: "x", Decls: []Decl{{Name: "F"}, {Recv: "T", Name: "M"}}, Idents: map[string]bool{"F": true, "M": true, "Query": true}}
	f.Fuzz(func(t *testing.T, text string) {
		var p *Pointcut
		var err error
		graphBound.Check(t, len(text), func() { p, err = ParseGraph(text) })
		if err != nil {
			return
		}
		g := p.Restrict(s)
		q, err := ParseGraph(g)
		if err != nil {
			t.Fatalf("the restriction %q of an accepted graph does not read back: %v", g, err)
		}
		if again := q.Restrict(s); again != g {
			t.Fatalf("restriction %q reads back as %q", g, again)
		}
	})
}
