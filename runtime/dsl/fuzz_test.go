package dsl

import (
	"errors"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

// FuzzParse checks that Parse never panics, that every error is a
// participle.Error with a position, that every accepted filter has a
// canonical text that parses back to itself, and that the whole costs at most
// parseBound (linear in the text).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"(more frequent ∪ most expensive) ∩ least changeable",
		"less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ less usage-pattern))",
		`frequent \ expensive - changeable minus latent ∖ concurrent`,
		"frequent | expensive & error-prone or state-variation and maintainable",
		"MORE Frequent", "more", "", "(", ")", "((frequent)", "frequent-expensive", "error_prone",
		"very frequent", "∪", "frequent ∪ or", "more\u00a0frequent", "\xff", "frequent\n∪\nexpensive",
	} {
		f.Add(s)
	}
	Parse("frequent") // the parser is built on first use
	f.Fuzz(func(t *testing.T, s string) {
		parseBound.Check(t, len(s), func() { checkParse(t, s) })
	})
}

// parseBound is what parsing a filter, writing it back and parsing that may
// cost.
var parseBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 256 << 10, Allocs: 1 << 10},
	PerByte: costcheck.Cost{Bytes: 4 << 10, Allocs: 64},
}

// TestParseCostLinear: filters of many terms and of many parenthesised
// groups cost allocation linear in their length.
func TestParseCostLinear(t *testing.T) {
	terms := func(n int) []byte {
		words := make([]string, n)
		for i := range words {
			words[i] = []string{"more frequent", "least expensive", "changeable"}[i%3]
		}
		return []byte(strings.Join(words, " ∪ "))
	}
	groups := func(n int) []byte {
		return []byte(strings.Repeat("((more frequent ∩ expensive) \\ (latent ∪ (less concurrent))) ∪ ", n) + "frequent")
	}
	for name, gen := range map[string]func(int) []byte{"terms": terms, "groups": groups} {
		t.Run(name, func(t *testing.T) {
			costcheck.Linear(t, gen, func(in []byte) {
				if _, err := Parse(string(in)); err != nil {
					t.Fatal(err)
				}
			}, 25, 8)
		})
	}
}

func checkParse(t *testing.T, s string) {
	flt, err := Parse(s)
	if err != nil {
		var perr participle.Error
		if !errors.As(err, &perr) {
			t.Fatalf("Parse(%q): %T %v is not a participle.Error", s, err, err)
		}
		if p := perr.Position(); p.Line < 1 || p.Column < 1 {
			t.Fatalf("Parse(%q): error without position: %v", s, err)
		}
		return
	}
	canon := flt.String()
	g, err := Parse(canon)
	if err != nil {
		t.Fatalf("canonical %q of %q does not parse: %v", canon, s, err)
	}
	if g.String() != canon {
		t.Fatalf("canonical text is not a fixpoint: %q → %q", canon, g.String())
	}
	if len(flt.Criteria()) == 0 {
		t.Fatalf("Parse(%q) has no criteria", s)
	}
	for _, c := range flt.Criteria() {
		if !IsCriterion(c) {
			t.Fatalf("Parse(%q) has criterion %q", s, c)
		}
	}
}

// TestParseLimits: a filter of half a megabyte of "(" used to be parsed by
// recursion, half a gigabyte of stack and more for the nesting alone (Go ends
// a program whose goroutine needs more than 1 GB). Nesting and length are now
// refused before the parser runs, at the place that crosses the bound.
func TestParseLimits(t *testing.T) {
	for _, tc := range []struct {
		expr, want string
	}{
		{strings.Repeat("(", 1<<19) + "frequent" + strings.Repeat(")", 1<<19), "1:1: filter is longer than 16384 bytes"},
		{strings.Repeat("(", 8000) + "frequent" + strings.Repeat(")", 8000), "1:65: filter nested deeper than 64 parentheses"},
		{strings.Repeat("(", MaxNesting) + "frequent" + strings.Repeat(")", MaxNesting) + " ∪ (" + strings.Repeat("(", MaxNesting) + "latent" + strings.Repeat(")", MaxNesting+1), "1:204: filter nested deeper than 64 parentheses"},
		{strings.Repeat("frequent ∪ ", 2000) + "latent", "1:1: filter is longer than 16384 bytes"},
	} {
		var err error
		cost := costcheck.Of(func() { _, err = Parse(tc.expr) })
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse of %d bytes: %v; want %s", len(tc.expr), err, tc.want)
		}
		if cost.Bytes > costcheck.Allowance(64<<20) {
			t.Errorf("refusing %d bytes allocated %d bytes", len(tc.expr), cost.Bytes)
		}
	}
	deep := strings.Repeat("(", MaxNesting) + "frequent" + strings.Repeat(")", MaxNesting)
	if _, err := Parse(deep); err != nil {
		t.Errorf("%d parentheses: %v", MaxNesting, err)
	}
}
