package rewriter

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
)

// Call sites matched by call(...) pointcuts (doc.go).

// callSites plans the edits for matched call sites in fd's body.
func (pj *packageJob) callSites(i int, fd *ast.FuncDecl, caller *types.Func) {
	if hasGoto(fd.Body) {
		return
	}
	pos := pj.fset.Position(fd.Pos())
	callerSig := SignatureOf(pj.pkgPath, caller, pj.pkgPath+"/"+filepath.Base(pos.Filename), pos.Line)
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		}
		for _, st := range list {
			pj.callSite(i, st, &callerSig)
		}
		return true
	})
}

// callSite brackets st when it is a matched call of a supported shape.
func (pj *packageJob) callSite(i int, st ast.Stmt, caller *signatureLit) {
	var call *ast.CallExpr
	var lhs []ast.Expr
	switch st := st.(type) {
	case *ast.ExprStmt:
		call, _ = ast.Unparen(st.X).(*ast.CallExpr)
	case *ast.AssignStmt:
		if len(st.Rhs) == 1 {
			call, _ = ast.Unparen(st.Rhs[0]).(*ast.CallExpr)
			lhs = st.Lhs
		}
	}
	if call == nil {
		return
	}
	callee := calleeOf(call, pj.info)
	if callee == nil || callee.Pkg() == nil {
		return // builtins, conversions, function values
	}
	pos := pj.fset.Position(call.Pos())
	sig := SignatureOf(callee.Pkg().Path(), callee, pj.pkgPath+"/"+filepath.Base(pos.Filename), pos.Line)
	if !pj.s.cfg.Instrument.MatchCall(&sig, caller) {
		return
	}
	key := "call " + sig.String()
	id, ok := pj.callProbes[key]
	if !ok {
		id = len(pj.probes)
		pj.callProbes[key] = id
		pj.probes = append(pj.probes, probeDesc{sig: sig})
		pj.s.logf("%s:%d: call of %s: instrumented as probe %d", sig.File, pos.Line, sig.Name, id)
	}
	errArg := "nil"
	res := callee.Type().(*types.Signature).Results()
	if res.Len() > 0 && isError(res.At(res.Len()-1).Type()) && len(lhs) == res.Len() {
		if id, ok := lhs[len(lhs)-1].(*ast.Ident); ok && id.Name != "_" {
			errArg = id.Name
		}
	}
	v := fmt.Sprintf("__tgc%d", pj.callSeq)
	pj.callSeq++
	pj.edits[i] = append(pj.edits[i],
		edit{off: pj.off(st.Pos()), text: fmt.Sprintf("%s := %s.Enter(&%s[%d]); ", v, alias, probesVar, id)},
		edit{off: pj.off(st.End()), text: fmt.Sprintf("; if %s.On() { %s.Exit(%s) }", v, v, errArg)})
}

// calleeOf resolves the function or method a call statically names, or nil.
func calleeOf(call *ast.CallExpr, info *types.Info) *types.Func {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr: // explicit instantiation F[T](x)
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[f]; ok {
			if sel.Kind() != types.MethodVal {
				return nil // a method expression or a field of func type
			}
			fn, _ := sel.Obj().(*types.Func)
			if fn != nil {
				fn = fn.Origin()
			}
			return fn
		}
		id = f.Sel // a qualified identifier pkg.F
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

func hasGoto(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if b, ok := n.(*ast.BranchStmt); ok && b.Tok == token.GOTO {
			found = true
		}
		return !found
	})
	return found
}
