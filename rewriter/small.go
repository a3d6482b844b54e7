package rewriter

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
)

// SmallSize is the largest compiler size of a function too small to be worth
// a probe (see smallBody): twice the compiler's inlining budget (80). Such a
// body runs in a few nanoseconds, less than a coarse probe's two clock reads,
// and even an off probe (a load, a branch, and the frame a call needs) adds a
// large share of its time.
const SmallSize = 160

// SmallReason starts the reason `tigris match` gives for a matched function
// that gets no probe because it is too small to be worth one (IsSmall).
const SmallReason = "too small to be worth a probe"

// smallReason is the whole reason for a function of compiler size size.
func smallReason(size int) string {
	return fmt.Sprintf("%s: no loop, no call the compiler keeps, size %d by the compiler's measure (at most %d; its inlining budget is 80), a few ns a call where a coarse probe costs about 25 ns (monitor.small: probe instruments it anyway)", SmallReason, size, SmallSize)
}

// smallBody reports whether fd, whose body the compiler sized at size (too
// complex to inline; 0 when the compiler did not say), is too small to be
// worth a probe: size at most SmallSize, and nothing in the body that takes
// time of its own, which a probe would be there to measure: no loop, no go,
// defer or select statement, and no call but of builtins, conversions and
// functions of its own package that the compiler inlines there (inlinedAt
// reports an inlined call site by the position of its opening parenthesis)
// and whose bodies call nothing but builtins and conversions (decl finds a
// function's declaration in the package). A loop in such a callee is its
// slow path's (a whitespace skipper's); a call of another package's
// function, inlined or not, may be anything (os.Open is inlined). Function
// literals in the body are not looked into: they run when called.
func smallBody(fd *ast.FuncDecl, size int, info *types.Info, fset *token.FileSet, inlinedAt func(token.Position) bool, decl func(*types.Func) *ast.FuncDecl) bool {
	if size == 0 || size > SmallSize || fd.Body == nil {
		return false
	}
	small := true
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ForStmt, *ast.RangeStmt, *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt:
			small = false
		case *ast.CallExpr:
			if cheapCall(n, info) {
				break
			}
			// decl knows the functions of this package only.
			d := (*ast.FuncDecl)(nil)
			if callee := calleeOf(n, info); callee != nil {
				d = decl(callee)
			}
			if d == nil || !inlinedAt(fset.Position(n.Lparen)) || !callsNothing(d, info) {
				small = false
			}
		}
		return small
	})
	return small
}

// callsNothing reports whether fd's body calls nothing but builtins and
// conversions.
func callsNothing(fd *ast.FuncDecl, info *types.Info) bool {
	if fd.Body == nil {
		return false
	}
	none := true
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !cheapCall(call, info) {
			none = false
		}
		return none
	})
	return none
}

// cheapCall reports whether call is a conversion or a call of a builtin.
func cheapCall(call *ast.CallExpr, info *types.Info) bool {
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return true
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		_, builtin := info.Uses[id].(*types.Builtin)
		return builtin
	}
	return false
}

// funcDecls maps the functions declared in files to their declarations.
func funcDecls(files []*ast.File, info *types.Info) func(*types.Func) *ast.FuncDecl {
	m := map[*types.Func]*ast.FuncDecl{}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					m[fn] = fd
				}
			}
		}
	}
	return func(fn *types.Func) *ast.FuncDecl { return m[fn] }
}
