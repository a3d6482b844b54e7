package pointcut

import "strings"

// Signature is the plain description of one Go function or method that the matcher
// works on. The rewriter fills it from go/types at build time; the monitor rebuilds it
// from probe metadata at run time, so one matcher serves both.
//
// Type strings are written the way Go source writes them, with package-qualified
// names using the full import path: "int", "[]byte", "error", "context.Context" is
// written "context.Context" (the path of a std package is its name), a type from
// another module "example.com/shop/model.Owner", a pointer "*example.com/shop/model.Owner".
type Signature struct {
	// Package is the import path of the declaring package, e.g. "example.com/shop/repo".
	// For a main package it is the import path the go command uses ("main" only for
	// command-line files), and Flags has Main.
	Package string
	// Recv is the receiver's base type name without pointer or type parameters
	// ("Store" for func (s *Store[K]) ...); empty for plain functions.
	Recv string
	// RecvPtr reports a pointer receiver.
	RecvPtr bool
	// Name is the function or method name. For a function literal it is the
	// name Go gives the declared function it is written in ("Outer", "M",
	// "init.0" in the first func init, "init" in a package-level initializer),
	// and Recv and RecvPtr are that function's.
	Name string
	// Lit is empty for a declared function. For a function literal it is the
	// rest of the name Go gives it, after Name, separator first: ".func1",
	// ".func2.1", and from Go 1.27 "-range1.1" inside a range-over-func
	// loop's body. Package + "." + [receiver "."] + Name + Lit is then the
	// name runtime.FuncForPC prints. Flags has Literal.
	Lit string
	// Params and Results are the parameter and result types in order. A variadic last
	// parameter is written "...T".
	Params  []string
	Results []string
	// File and Line locate the declaration (file is the base name as the user wrote it
	// or the path relative to the module root when known).
	File string
	Line int
	// Flags holds the Go-specific facts predicates test.
	Flags Flags
}

// Flags are facts about a function that pointcut predicates can test.
type Flags uint32

const (
	// Exported: the name starts with an upper-case letter.
	Exported Flags = 1 << iota
	// Method: has a receiver.
	Method
	// Generic: the function has type parameters, or is a method of a generic type.
	Generic
	// Variadic: the last parameter is variadic.
	Variadic
	// ReturnsError: the last result is of type error.
	ReturnsError
	// Test: declared in a _test.go file.
	Test
	// Main: declared in a package named main (a command), whatever its import
	// path; the package pattern main matches it.
	Main
	// Literal: a function literal (Lit is set). A literal is never Exported
	// nor a Method; Generic, Test and Main are those of the function it is
	// written in, Variadic and ReturnsError its own.
	Literal
)

// Has reports whether all of want are set.
func (f Flags) Has(want Flags) bool { return f&want == want }

// String renders s as a Go-like declaration with full import paths, e.g.
// "func (*example.com/shop/repo.Store).Find(context.Context, int) (*example.com/shop/model.Owner, error)"
// or "func strings.Index(string, string) int", and for a function literal
// "func example.com/shop.NewHandler.func1(net/http.ResponseWriter, *net/http.Request)".
// Type parameters are not part of a
// Signature and are not shown.
func (s Signature) String() string {
	var b strings.Builder
	b.WriteString("func ")
	if s.Recv != "" {
		b.WriteByte('(')
		if s.RecvPtr {
			b.WriteByte('*')
		}
		b.WriteString(s.Package + "." + s.Recv + ").")
	} else {
		b.WriteString(s.Package + ".")
	}
	b.WriteString(s.Name + s.Lit + "(" + strings.Join(s.Params, ", ") + ")")
	switch len(s.Results) {
	case 0:
	case 1:
		b.WriteString(" " + s.Results[0])
	default:
		b.WriteString(" (" + strings.Join(s.Results, ", ") + ")")
	}
	return b.String()
}

// SplitLiteral splits a function literal's name as Name and Lit written
// together ("NewHandler.func1", "init.0.func2.1", "Walk-range1.1") into the
// two; a name without a literal part is all fn. Probe tables carry the two
// written together.
func SplitLiteral(name string) (fn, lit string) {
	i := strings.Index(name, ".func")
	if j := strings.Index(name, "-range"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i:]
}
