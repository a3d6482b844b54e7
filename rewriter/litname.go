package rewriter

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"runtime"
	"strconv"
	"strings"
)

// The names of function literals (doc.go, "Names of function literals").

// litName is the name Go gives a function literal: outer is the Go name of
// the declared function it is written in ("F", "(*T).M", "Gen[...]", "init.0";
// "init" for a package-level initializer, whose decl is nil), lit the rest
// (".func1", ".func2.1", "-range1.1").
type litName struct {
	decl       *ast.FuncDecl
	outer, lit string
}

// String is the name without the package: "F.func1".
func (n litName) String() string { return n.outer + n.lit }

// literalNames returns the name of every function literal of the package whose
// syntax and types are files and info (Types, Uses and InitOrder filled).
// files are in the order the compiler gets them. rangeScopes is
// rangeBodiesAreScopes(the toolchain's version).
func literalNames(files []*ast.File, info *types.Info, rangeScopes bool) map[*ast.FuncLit]litName {
	ln := &litNamer{info: info, rangeScopes: rangeScopes, names: map[*ast.FuncLit]litName{}, dropped: map[ast.Expr]bool{}}
	inits := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Name.Name == "_" {
				continue
			}
			name := funcDeclGoName(fd)
			if fd.Recv == nil && fd.Name.Name == "init" {
				name = "init." + strconv.Itoa(inits)
				inits++
			}
			ln.decl = fd
			ln.walk(fd.Body, &litScope{outer: name, declared: true})
		}
	}
	pkgInit := &litScope{outer: "init", declared: true}
	ln.decl = nil
	for _, in := range info.InitOrder {
		ln.walk(in.Rhs, pkgInit)
	}
	return ln.names
}

// rangeBodiesAreScopes reports whether the compiler of Go release version
// (runtime.Version's form) names the literals in a range-over-func body
// after the body (Go 1.27 and later, and development builds).
func rangeBodiesAreScopes(version string) bool {
	minor, err := strconv.Atoi(strings.TrimPrefix(release(version), "go1."))
	return err != nil || minor >= 27
}

// toolchainRangeScopes is rangeBodiesAreScopes for the release tigris runs
// with, which is the build's (checkToolchain).
var toolchainRangeScopes = rangeBodiesAreScopes(runtime.Version())

// funcDeclGoName is the compiler's name of a declared function without its
// package: F, Gen[...], T.M, (*T).M, (*T[...]).M.
func funcDeclGoName(fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if fd.Type.TypeParams != nil && len(fd.Type.TypeParams.List) > 0 {
		name += "[...]"
	}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return name
	}
	t := ast.Unparen(fd.Recv.List[0].Type)
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", ast.Unparen(s.X)
	}
	recv := ""
	switch t := t.(type) {
	case *ast.Ident:
		recv = t.Name
	case *ast.IndexExpr:
		recv = identName(t.X) + "[...]"
	case *ast.IndexListExpr:
		recv = identName(t.X) + "[...]"
	}
	if star != "" {
		return "(*" + recv + ")." + name
	}
	return recv + "." + name
}

func identName(e ast.Expr) string {
	if id, ok := ast.Unparen(e).(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// litScope is a function whose literals are numbered together: a declared
// function (its literals are outer.funcN) or a literal or range-over-func body
// (outer.N, where outer is the declared function's name and lit the rest).
// Its range-over-func bodies are numbered apart (outer-rangeN).
type litScope struct {
	outer, lit string
	declared   bool
	lits       int
	ranges     int
}

func (s *litScope) nextLit() string {
	s.lits++
	if s.declared {
		return ".func" + strconv.Itoa(s.lits)
	}
	return s.lit + "." + strconv.Itoa(s.lits)
}

func (s *litScope) nextRange() string {
	s.ranges++
	return s.lit + "-range" + strconv.Itoa(s.ranges)
}

type litNamer struct {
	info        *types.Info
	rangeScopes bool
	decl        *ast.FuncDecl // the function being walked
	names       map[*ast.FuncLit]litName
	dropped     map[ast.Expr]bool // operands staticBool leaves out
}

// walk names the literals in n in the compiler's order.
func (ln *litNamer) walk(n ast.Node, sc *litScope) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case nil:
			return false
		case ast.Expr:
			if ln.dropped[n] {
				return false
			}
			if tv, ok := ln.info.Types[n]; ok && tv.Value != nil {
				return false // written as its value
			}
			if fl, ok := n.(*ast.FuncLit); ok {
				lit := sc.nextLit()
				ln.names[fl] = litName{decl: ln.decl, outer: sc.outer, lit: lit}
				ln.walk(fl.Body, &litScope{outer: sc.outer, lit: lit})
				return false
			}
		case *ast.BlockStmt:
			ln.stmts(n.List, sc)
			return false
		case *ast.CaseClause:
			for _, e := range n.List {
				ln.walk(e, sc)
			}
			ln.stmts(n.Body, sc)
			return false
		case *ast.CommClause:
			ln.walk(n.Comm, sc)
			ln.stmts(n.Body, sc)
			return false
		case *ast.IfStmt:
			cond := ln.staticBool(n.Cond)
			ln.walk(n.Init, sc)
			ln.walk(n.Cond, sc)
			if cond >= 0 {
				ln.walk(n.Body, sc)
			}
			if cond <= 0 && n.Else != nil {
				ln.walk(n.Else, sc)
			}
			return false
		case *ast.ForStmt:
			ln.walk(n.Init, sc)
			if n.Cond != nil && ln.staticBool(n.Cond) < 0 {
				ln.walk(n.Cond, sc)
				return false // no post statement, an empty body
			}
			ln.walk(n.Cond, sc)
			ln.walk(n.Post, sc)
			ln.walk(n.Body, sc)
			return false
		case *ast.RangeStmt:
			if !ln.rangeScopes || !ln.rangesOverFunc(n.X) {
				return true
			}
			ln.walk(n.Key, sc)
			ln.walk(n.Value, sc)
			ln.walk(n.X, sc)
			ln.walk(n.Body, &litScope{outer: sc.outer, lit: sc.nextRange()})
			return false
		case *ast.SwitchStmt:
			ln.switchStmt(n, sc)
			return false
		}
		return true
	})
}

// rangesOverFunc reports whether a range loop over x is a range-over-func
// loop, whose body the compiler makes a function of.
func (ln *litNamer) rangesOverFunc(x ast.Expr) bool {
	t := ln.info.TypeOf(x)
	if t == nil {
		return false
	}
	if tp, ok := types.Unalias(t).(*types.TypeParam); ok {
		// It ranges like its constraint's core type.
		return constraintHasFunc(tp.Constraint())
	}
	_, ok := t.Underlying().(*types.Signature)
	return ok
}

func constraintHasFunc(c types.Type) bool {
	iface, ok := c.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for i := 0; i < iface.NumEmbeddeds(); i++ {
		switch e := iface.EmbeddedType(i).(type) {
		case *types.Union:
			for j := 0; j < e.Len(); j++ {
				if _, ok := e.Term(j).Type().Underlying().(*types.Signature); ok {
					return true
				}
			}
		default:
			if _, ok := e.Underlying().(*types.Signature); ok {
				return true
			}
			if constraintHasFunc(e) {
				return true
			}
		}
	}
	return false
}

// stmts walks a statement list as writer.stmts writes it: what follows a
// terminating statement is left out unless a label follows.
func (ln *litNamer) stmts(list []ast.Stmt, sc *litScope) {
	lastLabel := -1
	for i, s := range list {
		if _, ok := s.(*ast.LabeledStmt); ok {
			lastLabel = i
		}
	}
	dead := false
	for i, s := range list {
		if dead && i > lastLabel {
			continue
		}
		ln.walk(s, sc)
		dead = ln.terminates(s)
	}
}

// terminates is the compiler's approximate test (writer.go) of whether s ends
// normal control flow.
func (ln *litNamer) terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.BranchStmt:
		return s.Tok == token.GOTO
	case *ast.ReturnStmt:
		return true
	case *ast.ExprStmt:
		if call, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "panic" {
				_, builtin := ln.info.Uses[id].(*types.Builtin)
				return builtin
			}
		}
	case *ast.IfStmt:
		cond := ln.staticBool(s.Cond)
		return (cond < 0 || ln.terminates(s.Body)) && (cond > 0 || s.Else != nil && ln.terminates(s.Else))
	case *ast.BlockStmt:
		if last := lastNonEmptyStmt(s.List); last != nil {
			return ln.terminates(last)
		}
	}
	return false
}

func lastNonEmptyStmt(list []ast.Stmt) ast.Stmt {
	for i := len(list) - 1; i >= 0; i-- {
		if _, ok := list[i].(*ast.EmptyStmt); !ok {
			return list[i]
		}
	}
	return nil
}

// staticBool is the compiler's staticBool (writer.go): +1 if e is always true,
// -1 if always false, 0 if unknown. The operands the compiler drops from e
// (a right operand decided by a constant left one) go into ln.dropped.
func (ln *litNamer) staticBool(e ast.Expr) int {
	if tv, ok := ln.info.Types[e]; ok && tv.Value != nil {
		if tv.Value.Kind() == constant.Bool && constant.BoolVal(tv.Value) {
			return +1
		}
		return -1
	}
	switch e := e.(type) {
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return ln.staticBool(e.X)
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			x := ln.staticBool(e.X)
			if x < 0 {
				ln.dropped[e.Y] = true
				return x
			}
			if y := ln.staticBool(e.Y); x > 0 || y < 0 {
				return y
			}
		case token.LOR:
			x := ln.staticBool(e.X)
			if x > 0 {
				ln.dropped[e.Y] = true
				return x
			}
			if y := ln.staticBool(e.Y); x < 0 || y > 0 {
				return y
			}
		}
	}
	return 0
}

// switchStmt walks a switch as writer.switchStmt writes it: on a constant tag
// (or none) whose cases are constants up to the one it matches, only the
// clause it takes (none when none matches), unless that clause falls through.
func (ln *litNamer) switchStmt(s *ast.SwitchStmt, sc *litScope) {
	ln.walk(s.Init, sc)
	clauses := s.Body.List
	var tag constant.Value
	if s.Tag == nil {
		tag = constant.MakeBool(true)
	} else if tv, ok := ln.info.Types[s.Tag]; ok {
		tag = tv.Value
	}
	if tag != nil {
		if target, ok := ln.constantTarget(tag, clauses); ok {
			clauses = nil
			if target != nil {
				clauses = []ast.Stmt{&ast.CaseClause{Body: target.Body}}
			}
		}
	}
	ln.walk(s.Tag, sc) // a constant tag has no literal
	for _, c := range clauses {
		ln.walk(c, sc)
	}
}

// constantTarget is the clause a switch on the constant tag always takes (nil:
// none), and ok false when the compiler keeps the whole switch.
func (ln *litNamer) constantTarget(tag constant.Value, clauses []ast.Stmt) (target *ast.CaseClause, ok bool) {
outer:
	for _, s := range clauses {
		c := s.(*ast.CaseClause)
		if c.List == nil {
			target = c
		}
		for _, e := range c.List {
			tv, ok := ln.info.Types[e]
			if !ok || tv.Value == nil {
				return nil, false
			}
			if constant.Compare(tag, token.EQL, tv.Value) {
				target = c
				break outer
			}
		}
	}
	if target != nil && hasFallthrough(target.Body) {
		return nil, false
	}
	return target, true
}

func hasFallthrough(list []ast.Stmt) bool {
	s := lastNonEmptyStmt(list)
	for {
		l, ok := s.(*ast.LabeledStmt)
		if !ok {
			break
		}
		s = l.Stmt
	}
	b, ok := s.(*ast.BranchStmt)
	return ok && b.Tok == token.FALLTHROUGH
}
