package pointcut

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/grammar.ebnf")

// TestGrammarGolden keeps the grammar visible: a change to a parser tag changes
// testdata/grammar.ebnf, which a reviewer sees in the diff. Run with -update to
// accept a change.
func TestGrammarGolden(t *testing.T) {
	got := parser().String() + "\n"
	path := filepath.Join("testdata", "grammar.ebnf")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "grammar changed; run go test -run TestGrammarGolden -update and review the diff")
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		expr string
		line int
		col  int
		msg  string
	}{
		{``, 1, 1, `empty pointcut expression`},
		{`   `, 1, 4, `empty pointcut expression`},
		{`execution(* x.F(..)`, 1, 20, `expected ")" to close "(" at 1:10`},
		{`within(x))`, 1, 10, `unexpected ")" without a matching opening bracket`},
		{`args([]int)]`, 1, 12, `unexpected "]" without a matching opening bracket`},
		{`args(map[string)int)`, 1, 16, `expected "]" to close "[" at 1:9, found ")"`},
		{`executon(* x.F(..))`, 1, 1, `unknown designator executon(; expected execution(...), call(...), within(...), args(...) or a predicate`},
		{`within(x) || !withn(y)`, 1, 15, `unknown designator withn(`},
		{`exportd()`, 1, 1, `unknown predicate exportd(); expected one of exported(), method(), function()`},
		{`within()`, 1, 1, `within() needs a pattern, e.g. within(example.com/shop/...)`},
		{`execution`, 1, 1, `execution needs a pattern in parentheses`},
		{`exported`, 1, 1, `did you mean the predicate exported()?`},
		{`repo`, 1, 1, `unknown pointcut "repo": no named pointcuts are defined`},
		{`within(x) & within(y)`, 1, 11, `unexpected character '&'; write && for and`},
		{`within(x) | within(y)`, 1, 11, `unexpected character '|'; write || for or`},
		{`within(x) within(y)`, 1, 11, `unexpected token "within"; expected && or || between terms`},
		{`&& within(x)`, 1, 1, `expected a term before &&`},
		{`within(x) &&`, 1, 13, `unexpected end of expression (expected a term`},
		{`execution(* net/http.(*Client).Do)`, 1, 34, `unexpected token ")" (expected "(" parameters ")")`},
		{`execution(* net/http.(*Client)Do(..))`, 1, 31, `unexpected token "Do" (expected ".")`},
		{`execution(* x.F(.., ))`, 1, 21, `expected a parameter type or ..`},
		{`execution(* example.com/x(..))`, 1, 27, `expected "." after package pattern example.com/x`},
		{`execution(* Find(..))`, 1, 13, `e.g. *.Find for any package`},
		{`execution(* x.Find *(..))`, 1, 20, `unexpected token "*"`},
		{`execution(* x.* Find(..))`, 1, 17, `unexpected token "Find" (expected "(" parameters ")")`},
		{`execution(* x.(** Store).F(..))`, 1, 19, `unexpected token "Store" (expected ")")`},
		{`execution(* x.F [K](..))`, 1, 17, `unexpected space before "[" in F[...]`},
		{`execution(* x.(*T).M[K](..))`, 1, 21, `a method has no type parameters of its own; put them on the receiver: (*T[...]).M`},
		{`execution(* x.().F(..))`, 1, 15, `expected a receiver type in parentheses: (*T), (T), or (*) for any receiver`},
		{`execution(* x.(*T).(..))`, 1, 15, `expected a method name after receiver (*T).`},
		{`execution(* x.F(...int, string))`, 1, 17, `...int can only be the last parameter`},
		{`execution(* x.F(map[string]))`, 1, 28, `unexpected token ")" (expected a type)`},
		{`args(` + strings.Repeat("*", 70) + `int)`, 1, 70, `expression nested deeper than 64`},
		{`args(map[` + strings.Repeat("map[", 40) + "int" + strings.Repeat("]", 41) + `)`, 1, 174, `unexpected token "]" (expected a type)`},
		{`within(a/b/)`, 1, 11, `unexpected character '/'; a package path has no empty elements`},
		{`within("a/b)`, 1, 8, `a quoted package path must end with " on the same line`},
		{`within("")`, 1, 8, `invalid quoted package path "": expected an import path pattern`},
		{`within(a/x.../b)`, 1, 8, `"..." must be a whole element of package pattern "a/x.../b"`},
		{`execution(* x.F(..)) && call(* y.G(..))`, 1, 1, `execution(...) && call(...) never matches`},
		{`within(x) && (execution(* x.F(..)) && call(* y.G(..)))`, 1, 15, `restrict calls by the calling function with withincode(...)`},
		{"within(x) &&\n  within(y) )", 2, 13, `unexpected ")"`},
		{"within(x) &&\n  executon(* x.F(..))", 2, 3, `unknown designator executon(`},
		{strings.Repeat("(", 70) + "within(x)" + strings.Repeat(")", 70), 1, 65, `expression nested deeper than 64`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := Parse(tt.expr)
			require.Error(t, err, "parsed as %s", p)
			assert.Nil(t, p)
			var perr participle.Error
			require.True(t, errors.As(err, &perr), "%T is not a participle.Error", err)
			assert.Equal(t, tt.line, perr.Position().Line, "line of %v", err)
			assert.Equal(t, tt.col, perr.Position().Column, "column of %v", err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func assertParseError(t *testing.T, err error, col int, msg string) {
	t.Helper()
	var perr participle.Error
	require.True(t, errors.As(err, &perr), "%v (%T) is not a participle.Error", err, err)
	assert.Equal(t, col, perr.Position().Column, "column of %v", err)
	assert.Contains(t, perr.Message(), msg)
}

// seeds are expressions FuzzParse starts from.
var seeds = []string{
	`execution(* net/http.(*Client).Do(..))`,
	`execution(error example.com/shop/...(context.Context, ..))`,
	`execution(* example.com/shop/...*(..)) && !within(example.com/shop/internal/...)`,
	`execution((*model.Owner, error) example.com/shop/repo.(*Store).Find*(context.Context, ..))`,
	`execution(* example.com/x.(*Tree[...]).Insert(..)) || execution(* example.com/x.Map[T, U]([]T, func(T) U))`,
	`call(* "gopkg.in/yaml.v3".*(..)) && withincode(* main.*(..)) && args(map[string]*, []*, chan<- error, ...any)`,
	`exported() && !test() || generic() && variadic() && returns_error() && pointer_receiver()`,
	`execution([]* *.*(..)) || execution((func()) ...*(..)) || execution([4]byte *.*(**, <-chan int))`,
	`!(all() || none()) && (within(a/*/b) || within(x.(*)))`,
}

// FuzzParse checks that Parse never panics, that the canonical text of whatever it
// accepts parses back to the same text, that matching never panics, and that
// the whole costs at most parseBound (linear in the expression).
func FuzzParse(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	Parse(seeds[0]) // the parser is built on first use
	sigs := []*Signature{clientDo, storeFind, storeLen, mapFn, logf, group, yamlMarshal, {}}
	f.Fuzz(func(t *testing.T, expr string) {
		parseBound.Check(t, len(expr), func() { checkParse(t, expr, sigs) })
	})
}

func checkParse(t *testing.T, expr string, sigs []*Signature) {
	p, err := Parse(expr)
	if err != nil {
		var perr participle.Error
		if !errors.As(err, &perr) {
			t.Fatalf("Parse(%q): %v is a %T, not a participle.Error", expr, err, err)
		}
		return
	}
	text := p.String()
	q, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q) = %s, which does not parse: %v", expr, text, err)
	}
	if q.String() != text {
		t.Fatalf("Parse(%q) = %s, which parses as %s", expr, text, q)
	}
	for _, s := range sigs {
		if p.MatchExecution(s) != q.MatchExecution(s) || p.MatchCall(s, sigs[0]) != q.MatchCall(s, sigs[0]) {
			t.Fatalf("%q and its canonical text %s match %v differently", expr, text, s)
		}
		p.MayMatchPackage(s.Package)
	}
}
