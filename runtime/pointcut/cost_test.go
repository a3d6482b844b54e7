package pointcut

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

// parseBound is what one expression may cost to parse, check and write
// back: the parser allocates about 80 kB for a leaf term of about 20 bytes.
var parseBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 1 << 20, Allocs: 1 << 12},
	PerByte: costcheck.Cost{Bytes: 8 << 10, Allocs: 64},
}

// graphBound is what ParseGraph may cost: each leaf costs a parse, about 80
// kB, and takes at least eight bytes of text.
var graphBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 1 << 20, Allocs: 1 << 12},
	PerByte: costcheck.Cost{Bytes: 16 << 10, Allocs: 256},
}

// namedText writes definitions as FuzzEnv reads them, "name: expression" a
// line.
func namedText(named []Named) []byte {
	var b strings.Builder
	for _, n := range named {
		fmt.Fprintf(&b, "%s: %s\n", n.Name, n.Expr)
	}
	return []byte(b.String())
}

// readNamed is FuzzEnv's reading of its input.
func readNamed(src string) []Named {
	var named []Named
	for _, l := range strings.Split(src, "\n") {
		name, expr, _ := strings.Cut(l, ":")
		named = append(named, Named{Name: strings.TrimSpace(name), Expr: expr})
	}
	return named
}

// TestCostLinear: parsing an expression, compiling named pointcuts (chains
// within the bound and chains that cross it) and reading a selection graph
// cost allocation linear in the input, whatever its shape.
func TestCostLinear(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		gen  func(n int) []byte
		f    func([]byte)
	}{
		{"an expression of n terms", 40, func(n int) []byte {
			terms := make([]string, n)
			for i := range terms {
				terms[i] = fmt.Sprintf("execution(* a.F%d(..))", i)
			}
			return []byte(strings.Join(terms, " || "))
		}, func(in []byte) { Parse(string(in)) }},
		{"a chain of n names each using the last", 100, func(n int) []byte {
			named := []Named{{Name: "a0", Expr: "execution(* example.com/x.F(..))"}}
			for i := 1; i < n; i++ {
				named = append(named, Named{Name: fmt.Sprintf("a%d", i), Expr: fmt.Sprintf("a%d || execution(* x.G%d(..))", i-1, i)})
			}
			return namedText(named)
		}, func(in []byte) { NewEnv(readNamed(string(in))) }},
		{"a chain of n names each using the last twice", 100, func(n int) []byte {
			return namedText(chain(n, "||"))
		}, func(in []byte) { NewEnv(readNamed(string(in))) }},
		{"a graph of n nodes each using the last", 200, func(n int) []byte {
			var b strings.Builder
			b.WriteString(`0 5 "execution(* x.F(..))"` + "\n")
			for i := 1; i < n; i++ {
				fmt.Fprintf(&b, "%d 3 %d 0\n", i, i-1)
			}
			return []byte(b.String())
		}, func(in []byte) { ParseGraph(string(in)) }},
	} {
		t.Run(tc.name, func(t *testing.T) { costcheck.Linear(t, tc.gen, tc.f, tc.n, 8) })
	}
}
