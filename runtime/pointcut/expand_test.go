package pointcut

import (
	"errors"
	"fmt"
	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"
)

// chain is n+1 named pointcuts, each using the previous one twice: a few hundred
// bytes whose full expansion doubles with every link (2^40 terms for n = 40).
func chain(n int, op string) []Named {
	named := []Named{{Name: "a0", Expr: "execution(* example.com/x.F(..))"}}
	for i := 1; i <= n; i++ {
		named = append(named, Named{Name: fmt.Sprintf("a%d", i), Expr: fmt.Sprintf("a%d %s !a%d", i-1, op, i-1)})
	}
	return named
}

// TestChainFailsFast: before MaxTerms, names were expanded by copying and
// NewEnv ran out of memory on this chain. Now the first name above the bound is
// the one error, positioned in its expression.
func TestChainFailsFast(t *testing.T) {
	for _, op := range []string{"||", "&&"} {
		var err error
		cost := costcheck.Of(func() { _, err = NewEnv(chain(40, op)) })
		require.Error(t, err)
		// Sizes 1, 4, 10, 22, …: a12 is the first above 10000 terms.
		var de *DefinitionError
		require.True(t, errors.As(err, &de), "%v", err)
		assert.Equal(t, "a12", de.Name)
		assert.Equal(t, 12, de.Index)
		var perr participle.Error
		require.True(t, errors.As(de.Err, &perr), "%v", de.Err)
		assert.Equal(t, 1, perr.Position().Line)
		assert.Equal(t, 8, perr.Position().Column, "at the second use of a11: %v", err)
		assert.Contains(t, err.Error(), `pointcut "a12": 1:8: expands to more than 10000 terms`)
		assert.NotContains(t, err.Error(), "a13", "names that only fail through a12 are not reported")
		assert.Less(t, cost.Bytes, costcheck.Allowance(16<<20), "bytes allocated (about 80 kB a definition)")
	}
}

// TestChainSharesNodes: a chain within the bound compiles to a graph linear in
// its length, and the expression using it is checked at the reference.
func TestChainSharesNodes(t *testing.T) {
	env, err := NewEnv(chain(11, "||"))
	require.NoError(t, err)
	p, _, ok := env.Lookup("a11")
	require.True(t, ok)
	assert.Equal(t, 6142, p.Terms())
	assert.True(t, p.MatchExecution(&Signature{Package: "example.com/x", Name: "F"}))
	assert.True(t, p.MatchExecution(&Signature{Package: "example.com/y", Name: "G"}), "a0 || !a0 matches everything")
	assert.Equal(t, 2048, strings.Count(p.String(), "execution("))

	_, err = env.Parse("a11 || a0 || a11")
	require.Error(t, err)
	var perr participle.Error
	require.True(t, errors.As(err, &perr))
	assert.Equal(t, 14, perr.Position().Column, "at the term that crosses the bound: %v", err)
	q, err := env.Parse("a11 || a0")
	require.NoError(t, err)
	assert.Equal(t, 6144, q.Terms())
	assert.Equal(t, MaxTerms+1, Or(p, p, p, q).Terms(), "Or saturates just above MaxTerms")
}

// FuzzEnv compiles named pointcuts from lines "name: expression" and matches
// with each: cost must stay linear in the input whatever the names do to each
// other (no pointcut above MaxTerms, allocation bounded per definition and per
// input byte; the parser allocates about 80 kB a definition).
func FuzzEnv(f *testing.F) {
	f.Add("a: execution(* x.F(..))\nb: a || !a\nc: b && b\nd: c || c")
	f.Add("repo: execution(* example.com/shop/...*(..)) && exported()\napp: repo && !internal\ninternal: within(example.com/shop/internal/...)")
	f.Add("a: b\nb: a")
	var text strings.Builder
	for _, n := range chain(30, "||") {
		fmt.Fprintf(&text, "%s: %s\n", n.Name, n.Expr)
	}
	f.Add(text.String())
	sigs := []*Signature{clientDo, storeFind, storeLen, mapFn, logf, group, yamlMarshal, {}}
	Parse(seeds[0]) // the parser is built on first use
	f.Fuzz(func(t *testing.T, src string) {
		envBound.Check(t, len(src), func() { checkEnv(t, src, sigs) })
	})
}

// envBound is what FuzzEnv's input may cost: every line is a definition,
// which costs a parse (about 80 kB, even for an empty expression), and a
// line takes at least one byte.
var envBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 1 << 20, Allocs: 1 << 12},
	PerByte: costcheck.Cost{Bytes: 132 << 10, Allocs: 1 << 10},
}

func checkEnv(t *testing.T, src string, sigs []*Signature) {
	env, err := NewEnv(readNamed(src))
	if err != nil {
		return
	}
	for _, name := range env.Names() {
		p, _, _ := env.Lookup(name)
		if p.Terms() > MaxTerms {
			t.Fatalf("%s has %d terms; want at most %d", name, p.Terms(), MaxTerms)
		}
		for _, s := range sigs {
			p.MatchExecution(s)
			p.MatchCall(s, sigs[0])
		}
		p.MayMatchPackage("example.com/x")
	}
}
