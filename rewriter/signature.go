package rewriter

import (
	"go/ast"
	"go/types"
	"strings"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// SignatureOf describes fn for the matcher. pkgPath is the package's import path
// as users write it in pointcuts; file and line locate the declaration.
func SignatureOf(pkgPath string, fn *types.Func, file string, line int) pointcut.Signature {
	sig := fn.Type().(*types.Signature)
	s := pointcut.Signature{Package: pkgPath, Name: fn.Name(), File: file, Line: line}
	if ast.IsExported(fn.Name()) {
		s.Flags |= pointcut.Exported
	}
	if recv := sig.Recv(); recv != nil {
		s.Flags |= pointcut.Method
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			s.RecvPtr = true
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			s.Recv = n.Obj().Name()
			if n.TypeParams().Len() > 0 || n.TypeArgs().Len() > 0 {
				s.Flags |= pointcut.Generic
			}
		}
	}
	if sig.TypeParams().Len() > 0 {
		s.Flags |= pointcut.Generic
	}
	describeParams(&s, sig)
	if strings.HasSuffix(file, "_test.go") {
		s.Flags |= pointcut.Test
	}
	if fn.Pkg() != nil && fn.Pkg().Name() == "main" {
		s.Flags |= pointcut.Main
	}
	return s
}

// LiteralSignatureOf describes a function literal of type sig for the
// matcher: encl describes the function it is written in (zero for a
// package-level initializer), name and lit its Go name (Signature.Name and
// Lit), pkgName the package's name; file and line locate the literal.
func LiteralSignatureOf(pkgPath, pkgName string, encl pointcut.Signature, name, lit string, sig *types.Signature, file string, line int) pointcut.Signature {
	s := pointcut.Signature{
		Package: pkgPath, Recv: encl.Recv, RecvPtr: encl.RecvPtr, Name: name, Lit: lit, File: file, Line: line,
		Flags: pointcut.Literal | encl.Flags&pointcut.Generic,
	}
	describeParams(&s, sig)
	if strings.HasSuffix(file, "_test.go") {
		s.Flags |= pointcut.Test
	}
	if pkgName == "main" {
		s.Flags |= pointcut.Main
	}
	return s
}

// describeParams fills s's parameters and results from sig, with the
// Variadic and ReturnsError flags.
func describeParams(s *pointcut.Signature, sig *types.Signature) {
	params := sig.Params()
	for i := 0; i < params.Len(); i++ {
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			s.Params = append(s.Params, "..."+typeString(t.(*types.Slice).Elem()))
			s.Flags |= pointcut.Variadic
			continue
		}
		s.Params = append(s.Params, typeString(t))
	}
	results := sig.Results()
	for i := 0; i < results.Len(); i++ {
		s.Results = append(s.Results, typeString(results.At(i).Type()))
	}
	if results.Len() > 0 && isError(results.At(results.Len()-1).Type()) {
		s.Flags |= pointcut.ReturnsError
	}
}

// typeString writes t as Go source would, qualifying names by full import path.
func typeString(t types.Type) string {
	return types.TypeString(t, func(p *types.Package) string { return p.Path() })
}

var errorType = types.Universe.Lookup("error").Type()

func isError(t types.Type) bool { return types.Identical(t, errorType) }

// staticMetrics computes what the analyzer's "maintainable" criterion can use
// without running the code: McCabe's cyclomatic complexity (1 + decision points)
// and the number of statements.
func staticMetrics(body *ast.BlockStmt) (cyclomatic, statements int) {
	cyclomatic = 1
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // its own function
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			cyclomatic++
		case *ast.CaseClause:
			if n.List != nil {
				cyclomatic++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				cyclomatic++
			}
		case *ast.BinaryExpr:
			if n.Op.String() == "&&" || n.Op.String() == "||" {
				cyclomatic++
			}
		}
		if _, ok := n.(ast.Stmt); ok {
			if _, block := n.(*ast.BlockStmt); !block {
				statements++
			}
		}
		return true
	})
	return cyclomatic, statements
}
