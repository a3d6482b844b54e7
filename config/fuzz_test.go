package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/costcheck"
)

// FuzzParse checks that Parse never panics, returns a config or an ErrorList but
// never both or neither, that every error has a position inside the file, and
// that the whole costs at most parseBound (linear in the file).
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add(Template("example.com/shop", "example.com/shop/repo"))
	f.Add([]byte("monitor:\n  mode: fast\n  rules:\n    - fine: repo\n"))
	f.Add([]byte("analysis:\n  criteria: |\n    more frequent\n    ∪ most expensive\n"))
	f.Add([]byte("pointcuts:\n  a: &x \"execution(* \\u00e9.F(..))\"\nmonitor:\n  include: [*x, a]\n"))
	f.Add([]byte("x: &a [*a]\n"))
	Parse("f.yaml", []byte(full)) // the parsers are built on first use
	f.Fuzz(func(t *testing.T, data []byte) {
		parseBound.Check(t, len(data), func() { checkParse(t, data) })
	})
}

// parseBound is what parsing one file may cost: every pointcut and filter in
// it is parsed (a pointcut term of about 20 bytes costs about 80 kB), and the
// run-time settings are encoded once.
var parseBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 2 << 20, Allocs: 8 << 10},
	PerByte: costcheck.Cost{Bytes: 8 << 10, Allocs: 64},
}

func checkParse(t *testing.T, data []byte) {
	c, err := Parse("f.yaml", data)
	if (c == nil) == (err == nil) {
		t.Fatalf("Parse = %v, %v", c, err)
	}
	if err == nil {
		c.Hash()
		if _, err := c.Runtime.Encode(); err != nil {
			t.Fatalf("a parsed config does not encode: %v", err)
		}
		return
	}
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error %v (%T) is not a non-empty ErrorList", err, err)
	}
	lines := len(newSource("f.yaml", data).lines)
	for _, e := range list {
		if e.Line < 0 || e.Line > lines || e.Col < 0 {
			t.Fatalf("error outside the file (%d lines): %v", lines, e)
		}
	}
}

// TestParseCostLinear: files of many named pointcuts, many include entries,
// chains of names (within pointcut.MaxTerms and across it), YAML aliases and
// deep YAML nesting cost allocation linear in their size. A file of hundreds
// of bytes used to take all memory (a chain of names expanded by copying).
func TestParseCostLinear(t *testing.T) {
	file := func(pointcuts func(b *strings.Builder, n int), include string) func(n int) []byte {
		return func(n int) []byte {
			var b strings.Builder
			b.WriteString("version: 1\npointcuts:\n")
			pointcuts(&b, n)
			fmt.Fprintf(&b, "monitor:\n  include: [%s]\n", include)
			return []byte(b.String())
		}
	}
	for _, tc := range []struct {
		name string
		n    int
		gen  func(n int) []byte
	}{
		{"n named pointcuts", 30, file(func(b *strings.Builder, n int) {
			for i := 0; i < n; i++ {
				fmt.Fprintf(b, "  p%d: execution(* example.com/x%d.F(..))\n", i, i)
			}
		}, "p0")},
		{"n include entries", 30, func(n int) []byte {
			var b strings.Builder
			b.WriteString("version: 1\nmonitor:\n  include:\n")
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, "    - execution(* example.com/x%d.F(..))\n", i)
			}
			return []byte(b.String())
		}},
		{"a chain of n names each using the last", 30, file(func(b *strings.Builder, n int) {
			b.WriteString("  a0: execution(* example.com/x.F(..))\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(b, "  a%d: a%d || execution(* x.G%d(..))\n", i, i-1, i)
			}
		}, "a0")},
		{"a chain of n names each using the last twice", 30, file(func(b *strings.Builder, n int) {
			b.WriteString("  a0: execution(* example.com/x.F(..))\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(b, "  a%d: a%d || !a%d\n", i, i-1, i-1)
			}
		}, "a0")},
		{"n aliases of one anchor", 30, file(func(b *strings.Builder, n int) {
			b.WriteString("  a0: &p execution(* example.com/x.F(..))\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(b, "  a%d: *p\n", i)
			}
		}, "a0")},
		{"YAML nested n deep", 30, func(n int) []byte {
			return []byte("version: 1\nmonitor:\n  include: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			costcheck.Linear(t, tc.gen, func(in []byte) { Parse("tigris.yaml", in) }, tc.n, 8)
		})
	}
}

// TestAliasesBounded: a file of 9 kB, one long pointcut and a hundred
// aliases of it, cost 818 MB of allocation and more than a second: each
// alias was parsed again. Aliases may now repeat at most the file's own size
// in values; the alias that crosses it is the error.
func TestAliasesBounded(t *testing.T) {
	terms := make([]string, 300)
	for i := range terms {
		terms[i] = fmt.Sprintf("execution(* a.F%d(..))", i)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\npointcuts:\n  a0: &p %s\n", strings.Join(terms, " || "))
	for i := 1; i < 100; i++ {
		fmt.Fprintf(&b, "  a%d: *p\n", i)
	}
	b.WriteString("monitor:\n  include: [a0]\n")
	var err error
	cost := costcheck.Of(func() { _, err = Parse("tigris.yaml", []byte(b.String())) })
	want := fmt.Sprintf("tigris.yaml:5:7: aliases repeat more than %d bytes of values, the size of the file (every alias is decoded again; share a pointcut by naming it under pointcuts:)", b.Len())
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant %s", err, want)
	}
	if cost.Bytes > costcheck.Allowance(64<<20) {
		t.Errorf("refusing the file allocated %d bytes", cost.Bytes)
	}
	// One alias of a long value is fine: it doubles the work at most.
	ok := "version: 1\npointcuts:\n  a0: &p " + strings.Join(terms[:50], " || ") + "\n  a1: *p\nmonitor:\n  include: [a0, a1]\n"
	if _, err := Parse("tigris.yaml", []byte(ok)); err != nil {
		t.Error(err)
	}
}
