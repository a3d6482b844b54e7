package dsl

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/participle/v2"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// TestGrammarGolden makes grammar changes visible in review.
func TestGrammarGolden(t *testing.T) {
	golden := filepath.Join("testdata", "grammar.ebnf")
	got := Grammar() + "\n"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGrammarGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("grammar changed; if intended, run go test -run TestGrammarGolden -update\ngot:\n%s\nwant:\n%s", got, want)
	}
}

// tree prints f as a fully parenthesised binary tree in prefix form, showing
// how the parser grouped it.
func tree(f *Filter) string {
	s := treeInter(f.Head)
	for _, t := range f.Tail {
		s = "(" + t.Op.String() + " " + s + " " + treeInter(t.Right) + ")"
	}
	return s
}

func treeInter(in *Intersection) string {
	s := treeOperand(in.Head)
	for _, o := range in.Tail {
		s = "(∩ " + s + " " + treeOperand(o) + ")"
	}
	return s
}

func treeOperand(o *Operand) string {
	if o.Def != nil {
		return strings.ReplaceAll(o.Def.String(), " ", "-")
	}
	return tree(o.Group)
}

func TestParse(t *testing.T) {
	tests := []struct {
		in, canon, tree string
		criteria        []string
	}{
		{"frequent", "frequent", "frequent", []string{"frequent"}},
		{"least frequent", "least frequent", "least-frequent", []string{"frequent"}},
		{"less frequent", "less frequent", "less-frequent", []string{"frequent"}},
		{"more frequent", "more frequent", "more-frequent", []string{"frequent"}},
		{"most frequent", "most frequent", "most-frequent", []string{"frequent"}},
		{"  Most   EXPENSIVE ", "most expensive", "most-expensive", []string{"expensive"}},
		// The paper's examples.
		{"(more frequent ∪ most expensive) ∩ least changeable",
			"(more frequent ∪ most expensive) ∩ least changeable",
			"(∩ (∪ more-frequent most-expensive) least-changeable)",
			[]string{"frequent", "expensive", "changeable"}},
		{"most changeable ∩ (most concurrent ∪ more error-prone)",
			"most changeable ∩ (most concurrent ∪ more error-prone)",
			"(∩ most-changeable (∪ most-concurrent more-error-prone))",
			[]string{"changeable", "concurrent", "error-prone"}},
		{"less changeable ∩ more frequent ∩ (more usage-pattern ∪ (more expensive ∩ less usage-pattern))",
			"less changeable ∩ more frequent ∩ (more usage-pattern ∪ more expensive ∩ less usage-pattern)",
			"(∩ (∩ less-changeable more-frequent) (∪ more-usage-pattern (∩ more-expensive less-usage-pattern)))",
			[]string{"changeable", "frequent", "usage-pattern", "expensive"}},
		{"(least changeable ∪ most changeable) ∩ more frequent ∩ (most usage-pattern \\ less expensive)",
			"(least changeable ∪ most changeable) ∩ more frequent ∩ (most usage-pattern \\ less expensive)",
			"(∩ (∩ (∪ least-changeable most-changeable) more-frequent) (\\ most-usage-pattern less-expensive))",
			[]string{"changeable", "frequent", "usage-pattern", "expensive"}},
		{"(less changeable ∪ changeable) ∩ (more frequent ∪ frequent) ∩ ((more usage-pattern ∪ usage-pattern) ∪ (more expensive ∪ expensive))",
			"(less changeable ∪ changeable) ∩ (more frequent ∪ frequent) ∩ (more usage-pattern ∪ usage-pattern ∪ (more expensive ∪ expensive))",
			"(∩ (∩ (∪ less-changeable changeable) (∪ more-frequent frequent)) (∪ (∪ more-usage-pattern usage-pattern) (∪ more-expensive expensive)))",
			[]string{"changeable", "frequent", "usage-pattern", "expensive"}},
		// Every criterion.
		{"maintainable ∪ state-variation ∪ latent ∪ concurrent",
			"maintainable ∪ state-variation ∪ latent ∪ concurrent",
			"(∪ (∪ (∪ maintainable state-variation) latent) concurrent)",
			[]string{"maintainable", "state-variation", "latent", "concurrent"}},
		// ASCII spellings.
		{"frequent | expensive", "frequent ∪ expensive", "(∪ frequent expensive)", []string{"frequent", "expensive"}},
		{"frequent or expensive", "frequent ∪ expensive", "(∪ frequent expensive)", nil},
		{"frequent & expensive", "frequent ∩ expensive", "(∩ frequent expensive)", nil},
		{"frequent AND expensive", "frequent ∩ expensive", "(∩ frequent expensive)", nil},
		{`frequent \ expensive`, `frequent \ expensive`, `(\ frequent expensive)`, nil},
		{"frequent ∖ expensive", `frequent \ expensive`, `(\ frequent expensive)`, nil},
		{"frequent - expensive", `frequent \ expensive`, `(\ frequent expensive)`, nil},
		{"frequent -expensive", `frequent \ expensive`, `(\ frequent expensive)`, nil},
		{"frequent minus expensive", `frequent \ expensive`, `(\ frequent expensive)`, nil},
		{"frequent\t∪\n expensive", "frequent ∪ expensive", "(∪ frequent expensive)", nil},
		{"more\u00a0frequent", "more frequent", "more-frequent", nil},
		// Precedence: ∩ binds tighter than ∪ and \.
		{"frequent ∪ expensive ∩ changeable", "frequent ∪ expensive ∩ changeable",
			"(∪ frequent (∩ expensive changeable))", nil},
		{"frequent ∩ expensive ∪ changeable", "frequent ∩ expensive ∪ changeable",
			"(∪ (∩ frequent expensive) changeable)", nil},
		{`frequent \ expensive ∩ changeable`, `frequent \ expensive ∩ changeable`,
			`(\ frequent (∩ expensive changeable))`, nil},
		// ∪ and \ are equal and left-associative.
		{`frequent ∪ expensive \ changeable`, `frequent ∪ expensive \ changeable`,
			`(\ (∪ frequent expensive) changeable)`, nil},
		{`frequent \ expensive ∪ changeable`, `frequent \ expensive ∪ changeable`,
			`(∪ (\ frequent expensive) changeable)`, nil},
		{`frequent \ expensive \ changeable`, `frequent \ expensive \ changeable`,
			`(\ (\ frequent expensive) changeable)`, nil},
		// Parentheses override, and only the needed ones are printed.
		{`frequent \ (expensive \ changeable)`, `frequent \ (expensive \ changeable)`,
			`(\ frequent (\ expensive changeable))`, nil},
		{`frequent ∪ (expensive \ changeable)`, `frequent ∪ (expensive \ changeable)`,
			`(∪ frequent (\ expensive changeable))`, nil},
		{`(frequent ∪ expensive) \ changeable`, `frequent ∪ expensive \ changeable`,
			`(\ (∪ frequent expensive) changeable)`, nil},
		{`(frequent ∩ expensive) ∪ changeable`, `frequent ∩ expensive ∪ changeable`,
			`(∪ (∩ frequent expensive) changeable)`, nil},
		{`frequent ∩ (expensive ∩ changeable)`, `frequent ∩ expensive ∩ changeable`,
			`(∩ frequent (∩ expensive changeable))`, nil},
		{`frequent ∩ (expensive ∪ changeable)`, `frequent ∩ (expensive ∪ changeable)`,
			`(∩ frequent (∪ expensive changeable))`, nil},
		{`((((frequent))))`, `frequent`, `frequent`, nil},
		{`(frequent) ∩ ((expensive))`, `frequent ∩ expensive`, `(∩ frequent expensive)`, nil},
		{`frequent ∪ frequent`, `frequent ∪ frequent`, `(∪ frequent frequent)`, []string{"frequent"}},
	}
	for _, tt := range tests {
		f, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := f.String(); got != tt.canon {
			t.Errorf("Parse(%q).String() = %q; want %q", tt.in, got, tt.canon)
		}
		if got := tree(f); got != tt.tree {
			t.Errorf("Parse(%q) grouped as %s; want %s", tt.in, got, tt.tree)
		}
		if tt.criteria != nil && !slices.Equal(f.Criteria(), tt.criteria) {
			t.Errorf("Parse(%q).Criteria() = %q; want %q", tt.in, f.Criteria(), tt.criteria)
		}
		g, err := Parse(f.String())
		if err != nil || g.String() != f.String() {
			t.Errorf("canonical text %q does not round-trip: %v %v", f.String(), g, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		pos  string // line:column
		want string // substring of the message
	}{
		{"", "1:1", "empty filter"},
		{"   ", "1:4", "empty filter"},
		{"often", "1:1", `unknown criterion "often"`},
		{"often", "1:1", "valid: frequent, maintainable, expensive, changeable, error-prone, usage-pattern, state-variation, concurrent, latent"},
		{"more frequent ∪ cheap", "1:17", `unknown criterion "cheap"`},
		{"error_prone", "1:1", `did you mean "error-prone"?`},
		{"least-frequent", "1:1", `did you mean "least frequent"?`},
		{"frequent-expensive", "1:1", `spaces around "-"`},
		{"very frequent", "1:1", `unknown modifier "very" (valid: least, less, more, most)`},
		// Near misses: one edit per three characters, swaps included.
		{"frequnt", "1:1", `unknown criterion "frequnt"; did you mean "frequent"? (valid:`},
		{"more expnsive ∪ latnet", "1:6", `expected a criterion after "more": "expnsive" is not one; did you mean "expensive"? (valid:`},
		{"mroe frequent", "1:1", `unknown modifier "mroe"; did you mean "more"? (valid:`},
		{"frequent ∪ mots", "1:12", `unknown criterion "mots"; did you mean the modifier "most" (before a criterion)?`},
		{"errorprone", "1:1", `did you mean "error-prone"?`},
		{"fast", "1:1", `unknown criterion "fast" (valid:`},
		{"more", "1:5", `expected a criterion after "more"`},
		{"most ∪ frequent", "1:6", `expected a criterion after "most"`},
		{"more more frequent", "1:6", `expected a criterion after "more"`},
		{"more (frequent)", "1:1", "applies to one criterion"},
		{"frequent expensive", "1:10", `unexpected "expensive": expected an operator`},
		{"frequent ∪", "1:11", `expected a filter after operator "∪"`},
		{"frequent ∪ ∩ expensive", "1:12", `unexpected operator "∩"`},
		{"∪ frequent", "1:1", `unexpected operator "∪"`},
		{"or frequent", "1:1", `unexpected operator "or"`},
		{"frequent ∪ (and)", "1:13", `unexpected operator "and"`},
		{"(frequent", "1:10", `missing ")"`},
		{"frequent)", "1:9", `unexpected ")"`},
		{"()", "1:2", `unexpected ")"`},
		{"(", "1:2", `expected a filter after "("`},
		{"frequent (expensive)", "1:10", `unexpected "("`},
		{"frequent # expensive", "1:10", `invalid character "#"`},
		{"frequent ∪ expensive ⊕ x", "1:22", `invalid character "⊕"`},
		{"frequent\n∪ expensive x", "2:13", `unknown criterion "x"`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded; want error %q", tt.in, tt.want)
			continue
		}
		var perr participle.Error
		if !errors.As(err, &perr) {
			t.Errorf("Parse(%q) error %T does not implement participle.Error", tt.in, err)
			continue
		}
		if got := perr.Position().String(); got != tt.pos {
			t.Errorf("Parse(%q) error at %s; want %s (%v)", tt.in, got, tt.pos, err)
		}
		if !strings.Contains(perr.Message(), tt.want) {
			t.Errorf("Parse(%q) = %q; want it to contain %q", tt.in, perr.Message(), tt.want)
		}
		if strings.Contains(err.Error(), "participle") || strings.Contains(err.Error(), "<ident>") {
			t.Errorf("Parse(%q) leaks parser internals: %v", tt.in, err)
		}
	}
}

func TestMustParse(t *testing.T) {
	if MustParse("most expensive").String() != "most expensive" {
		t.Error("MustParse")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParse of an invalid filter did not panic")
		}
	}()
	MustParse("most")
}

func TestParseConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for left := 8; left > 0; left-- {
		wg.Go(func() {
			for left := 200; left > 0; left-- {
				f, err := Parse("(more frequent ∪ most expensive) ∩ least changeable")
				if err != nil || f.String() != "(more frequent ∪ most expensive) ∩ least changeable" {
					t.Errorf("concurrent Parse: %v %v", f, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestMarshalText(t *testing.T) {
	b, err := MustParse("frequent | expensive").MarshalText()
	if err != nil || string(b) != "frequent ∪ expensive" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
}
