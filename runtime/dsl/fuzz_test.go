package dsl

import (
	"errors"
	"testing"

	"github.com/alecthomas/participle/v2"
)

// FuzzParse checks that Parse never panics, that every error is a
// participle.Error with a position, and that every accepted filter has a
// canonical text that parses back to itself.
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
	f.Fuzz(func(t *testing.T, s string) {
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
	})
}
