package rewriter

import (
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The inlining pass compiles a reduced copy of the package; doc.go says why
// the compiler's decisions on the functions it keeps do not change.

// stubBody replaces a body the inlining pass need not compile. A call of
// recover keeps the stub from being inlined (the compiler inlines no
// function that calls it), so a caller's cost is what it is in the real
// package, and adds no function of its own (a defer would: its wrapper); panic
// ends every path, whatever the results.
const stubBody = "recover(); panic(0)"

// inliningFiles writes the reduced copy of the package's files for the
// inlining pass into dir and returns the files to compile: a file with
// nothing stubbed is compiled where it is. stubbed counts the stubbed bodies.
// Every position the compiler reports stays that of the original file: a stub
// keeps the line breaks of the body it replaces, and a //line directive names
// the original file.
func (pj *packageJob) inliningFiles(dir string) (files []string, stubbed int, err error) {
	stub := pj.stubs()
	files = make([]string, len(pj.files))
	for i, f := range pj.files {
		files[i] = pj.job.Files[i]
		var edits []edit
		stubs := map[*ast.BlockStmt]bool{}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || stub[fd] == "" {
				continue
			}
			stubs[fd.Body] = true
			body := pj.srcs[i][pj.off(fd.Body.Lbrace)+1 : pj.off(fd.Body.Rbrace)]
			edits = append(edits, edit{
				off:  pj.off(fd.Body.Lbrace) + 1,
				del:  len(body),
				text: stub[fd] + strings.Repeat("\n", strings.Count(string(body), "\n")),
			})
		}
		if len(edits) == 0 {
			continue
		}
		stubbed += len(edits)
		edits = append(edits, unusedImports(f, stubs, pj.info, pj.off)...)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, 0, err
		}
		abs, err := filepath.Abs(pj.job.Files[i])
		if err != nil {
			return nil, 0, err
		}
		// With a column, the directive keeps the columns the compiler
		// reports (inlined calls are known by theirs).
		src := append([]byte("//line "+abs+":1:1\n"), applyEdits(pj.srcs[i], edits)...)
		files[i] = filepath.Join(dir, filepath.Base(abs))
		if err := os.WriteFile(files[i], src, 0o644); err != nil {
			return nil, 0, err
		}
	}
	return files, stubbed, nil
}

// stubs returns the functions whose bodies the inlining pass stubs, with
// the body each gets (stubBody, or cycleStub's).
func (pj *packageJob) stubs() map[*ast.FuncDecl]string {
	noInline, floors := pj.notInlined()
	if pj.decls == nil {
		pj.decls = funcDecls(pj.files, pj.info)
	}
	stub := map[*ast.FuncDecl]string{}
	for i, f := range pj.files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !pj.keepDecls[fd] && pj.stubbable(fd, pj.srcs[i], noInline, floors) {
				stub[fd] = stubBody
			}
		}
	}
	keepCycles(pj.files, pj.info, stub)
	return stub
}

// stubbable reports whether the compiler certainly neither inlines the
// function nor finds it small (SmallSize): notInlined holds it, and its
// costFloor exceeds SmallSize or its body could not be small whatever its
// size (a loop, a call of a function that is not cheap; smallBody). A body
// that instantiates a generic function of the package, or that has a //line
// directive of its own (the stub would move the positions after it), is kept.
func (pj *packageJob) stubbable(fd *ast.FuncDecl, src []byte, noInline map[*types.Func]bool, floors map[*types.Func]int) bool {
	body := fd.Body
	fn, ok := pj.info.Defs[fd.Name].(*types.Func)
	if !ok || !noInline[fn] || len(body.List) == 0 || instantiatesLocal(body, pj.info) {
		return false
	}
	text := string(src[pj.off(body.Lbrace):pj.off(body.Rbrace)])
	if strings.Contains(text, "//line ") || strings.Contains(text, "/*line ") {
		return false
	}
	everInlined := func(token.Position) bool { return true }
	return neverInlined(body, pj.info) || floors[fn] > SmallSize || !smallBody(fd, 1, pj.info, pj.fset, everInlined, pj.decls)
}

// instantiatesLocal reports whether body instantiates a generic function or
// type of its own package: the compiler compiles, and reports on, the shapes
// of a generic function that the package instantiates, so a stub must not
// take an instantiation away.
func instantiatesLocal(body *ast.BlockStmt, info *types.Info) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if _, ok := info.Instances[id]; ok {
				obj := info.Uses[id]
				if fn, ok := obj.(*types.Func); ok {
					obj = fn.Origin()
				}
				if obj != nil && obj.Pkg() != nil && obj.Pkg().Scope().Lookup(obj.Name()) == obj {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// keepCycles keeps the calls of the stubs that call themselves back through
// a function that is not stubbed. The compiler decides on the functions of
// a cycle of calls together, in an order that the cycle's calls set; a stub
// that called nothing would break the cycle and could change the decisions
// of the others. Such a stub refers to what its body called, in the body's
// order (cycleStub); one that cannot is not stubbed. A cycle of stubs only
// holds functions whose decision is known.
func keepCycles(files []*ast.File, info *types.Info, stub map[*ast.FuncDecl]string) {
	decls := map[*types.Func]*ast.FuncDecl{}
	var order []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[fn] = fd
					order = append(order, fd)
				}
			}
		}
	}
	callees := func(fd *ast.FuncDecl) []*types.Func {
		var out []*types.Func
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if fn, ok := info.Uses[id].(*types.Func); ok && decls[fn.Origin()] != nil {
					out = append(out, fn.Origin())
				}
			}
			return true
		})
		return out
	}
	calls := func(fd *ast.FuncDecl) []*ast.FuncDecl {
		var out []*ast.FuncDecl
		for _, fn := range callees(fd) {
			out = append(out, decls[fn])
		}
		return out
	}
	for _, scc := range stronglyConnected(order, calls) {
		if len(scc) < 2 {
			continue
		}
		all := true
		for _, fd := range scc {
			all = all && stub[fd] != ""
		}
		if all {
			continue
		}
		for _, fd := range scc {
			if stub[fd] == "" {
				continue
			}
			if text, ok := cycleStub(fd, callees(fd), info); ok {
				stub[fd] = text
			} else {
				delete(stub, fd)
			}
		}
	}
}

// cycleStub is a stub (stubBody) that refers to the functions and methods of the
// package that fd's body refers to, in order: `_ = F; _ = (*T).M`. It
// cannot when a name is shadowed by a parameter, or names a generic type.
func cycleStub(fd *ast.FuncDecl, callees []*types.Func, info *types.Info) (string, bool) {
	shadowed := map[string]bool{}
	for _, list := range []*ast.FieldList{fd.Recv, fd.Type.TypeParams, fd.Type.Params, fd.Type.Results} {
		if list == nil {
			continue
		}
		for _, field := range list.List {
			for _, name := range field.Names {
				shadowed[name.Name] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("recover(); ")
	seen := map[*types.Func]bool{}
	for _, fn := range callees {
		if seen[fn] {
			continue
		}
		seen[fn] = true
		ref := fn.Name()
		if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
			t := recv.Type()
			ptr, isPtr := t.(*types.Pointer)
			if isPtr {
				t = ptr.Elem()
			}
			named, ok := types.Unalias(t).(*types.Named)
			if !ok || named.TypeParams().Len() > 0 || shadowed[named.Obj().Name()] {
				return "", false
			}
			ref = named.Obj().Name() + "." + fn.Name()
			if isPtr {
				ref = "(*" + named.Obj().Name() + ")." + fn.Name()
			}
		} else if shadowed[ref] || ref == "init" || fn.Type().(*types.Signature).TypeParams().Len() > 0 {
			return "", false
		}
		b.WriteString("_ = " + ref + "; ")
	}
	b.WriteString("panic(0)")
	return b.String(), true
}

// stronglyConnected returns the strongly connected components of the graph
// of nodes and their edges (Tarjan's algorithm, without recursion: a
// package's call chains can be deep).
func stronglyConnected[N comparable](nodes []N, edges func(N) []N) [][]N {
	type state struct {
		index, low int
		onStack    bool
	}
	st := map[N]*state{}
	var stack []N
	var out [][]N
	type frame struct {
		n    N
		next []N
	}
	for _, root := range nodes {
		if st[root] != nil {
			continue
		}
		st[root] = &state{index: len(st), low: len(st), onStack: true}
		stack = append(stack, root)
		frames := []frame{{root, edges(root)}}
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if len(f.next) > 0 {
				m := f.next[0]
				f.next = f.next[1:]
				switch s := st[m]; {
				case s == nil:
					st[m] = &state{index: len(st), low: len(st), onStack: true}
					stack = append(stack, m)
					frames = append(frames, frame{m, edges(m)})
				case s.onStack:
					st[f.n].low = min(st[f.n].low, s.index)
				}
				continue
			}
			n := f.n
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].n
				st[p].low = min(st[p].low, st[n].low)
			}
			if st[n].low == st[n].index {
				var scc []N
				for {
					m := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					st[m].onStack = false
					scc = append(scc, m)
					if m == n {
						break
					}
				}
				out = append(out, scc)
			}
		}
	}
	return out
}

// notInlined returns the functions of the package that the compiler
// certainly does not inline: those marked go:noinline or neverInlined, and
// those whose costFloor exceeds the compiler's budget. The floors grow as
// those of the functions they call are known: a call costs at least the
// callee's floor when it is inlined, and a call's cost when not.
func (pj *packageJob) notInlined() (noInline map[*types.Func]bool, floors map[*types.Func]int) {
	noInline = map[*types.Func]bool{}
	floors = map[*types.Func]int{}
	bodies := map[*types.Func]*ast.BlockStmt{}
	for _, f := range pj.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := pj.info.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			if neverInlined(fd.Body, pj.info) || hasDirective(fd, "//go:noinline") {
				noInline[fn] = true
			}
			bodies[fn] = fd.Body
		}
	}
	// Each body is counted once (costTerms); each round then raises the
	// floors from the callees' (each follows one more level of calls) until
	// none moves. Floors and noInline only grow, and a call adds at most
	// extraCallCost, so this ends, at the same floors in any order.
	type terms struct {
		n       int
		callees []*types.Func
	}
	counted := make(map[*types.Func]terms, len(bodies))
	for fn, body := range bodies {
		n, callees := costTerms(body, pj.info)
		counted[fn] = terms{n, callees}
	}
	for changed := true; changed; {
		changed = false
		for fn, t := range counted {
			f := floorOf(t.n, t.callees, floors, noInline)
			if f > floors[fn] {
				floors[fn], changed = f, true
			}
			if f > inlineBudget && !noInline[fn] {
				noInline[fn], changed = true, true
			}
		}
	}
	return noInline, floors
}

// inlineBudget is the compiler's budget for a function it inlines
// (inlineMaxBudget in cmd/compile/internal/inline).
const inlineBudget = 80

// hasDirective reports whether the function's doc comment holds directive.
func hasDirective(fd *ast.FuncDecl, directive string) bool {
	if fd.Doc == nil {
		return false
	}
	for _, c := range fd.Doc.List {
		if strings.HasPrefix(c.Text, directive) {
			return true
		}
	}
	return false
}

// neverInlined reports whether body, outside its function literals, holds a
// go or defer statement or a call of the builtin recover. (A function whose
// literal defers may inline.)
func neverInlined(body *ast.BlockStmt, info *types.Info) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.GoStmt, *ast.DeferStmt:
			found = true
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok {
				if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "recover" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// costFloor, a lower bound of the compiler's inlining cost of a body: the
// compiler charges at least one for every node of its IR (types and no-op
// conversions aside), and the nodes counted here each become at least one: a
// statement, a call that is no conversion and the name it calls, an operator
// whose value is no constant, a constant, an index, a slice, a field
// selection, a use of a variable. A call the compiler cannot inline costs 57
// more: one through an interface or a func-typed field, or of a function of
// the package that noInline holds. Code the compiler may drop before it
// counts is left out: branches of an if or for whose condition has a
// constant operand, statements after one that ends the block, function
// literals (counted with their own budget in some cases). Three quarters of
// the count is the bound: the compiler folds nodes the count does not know
// of. TestInliningPassAgreesWithCompiler checks it against the compiler.
//
// floorOf is costFloor from the terms costTerms counts once per body: n, the
// count of its nodes, and the callees of its calls, each charged calleeFloor.
func floorOf(n int, callees []*types.Func, floors map[*types.Func]int, noInline map[*types.Func]bool) int {
	for _, fn := range callees {
		n += calleeFloor(fn, floors, noInline)
	}
	return n * 3 / 4 // a margin for what the compiler folds that the count does not know of
}

// costTerms counts body's nodes for costFloor, all but what its calls'
// callees add (calleeFloor), which depends on the floors: those callees are
// returned, one for each call.
func costTerms(body *ast.BlockStmt, info *types.Info) (n int, callees []*types.Func) {
	var stmts func([]ast.Stmt)
	var node func(ast.Node) bool
	node = func(x ast.Node) bool {
		if e, ok := x.(ast.Expr); ok {
			if tv, ok := info.Types[e]; ok {
				switch {
				case tv.IsType():
					return false
				case tv.Value != nil:
					n++ // one literal
					return false
				}
			}
		}
		switch x := x.(type) {
		case nil:
			return false
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			stmts(x.List)
			return false
		case *ast.CaseClause:
			for _, e := range x.List {
				ast.Inspect(e, node)
			}
			stmts(x.Body)
			return false
		case *ast.CommClause:
			ast.Inspect(x.Comm, node)
			stmts(x.Body)
			return false
		case *ast.IfStmt:
			if hasConstantOperand(x.Cond, info) {
				return false
			}
			n++
		case *ast.ForStmt:
			if x.Cond != nil && hasConstantOperand(x.Cond, info) {
				return false
			}
			n++
		case *ast.SwitchStmt:
			if x.Tag != nil && info.Types[x.Tag].Value != nil {
				return false
			}
			n++
		case *ast.AssignStmt:
			if !allBlank(x.Lhs) {
				n++
			}
		case *ast.BranchStmt:
			if x.Tok != token.FALLTHROUGH {
				n++
			}
		case *ast.RangeStmt:
			if _, iterator := info.Types[x.X].Type.Underlying().(*types.Signature); iterator {
				// The compiler makes the body of a range over a function
				// a function literal.
				ast.Inspect(x.X, node)
				return false
			}
			n++
		case *ast.IncDecStmt, *ast.ReturnStmt, *ast.TypeSwitchStmt, *ast.SendStmt, *ast.SelectStmt, *ast.LabeledStmt:
			n++
		case *ast.Ident:
			if v, ok := info.Uses[x].(*types.Var); ok && !v.IsField() {
				n++
			}
		case *ast.CallExpr:
			if tv, ok := info.Types[x.Fun]; ok && tv.IsType() {
				break // a conversion, which may be a no-op
			}
			fn := calleeOf(x, info)
			if fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "sync/atomic" {
				return false // coverage counters' updates cost nothing
			}
			n++
			if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok {
				if s, ok := info.Selections[sel]; ok {
					switch {
					case s.Kind() == types.FieldVal:
						n += extraCallCost // a func-typed field
					case s.Kind() == types.MethodVal && types.IsInterface(s.Recv()) && !isTypeParam(s.Recv()):
						n += extraCallCost
					case s.Kind() == types.MethodVal && fn != nil:
						callees = append(callees, fn)
					}
					break
				}
			}
			if fn != nil && fn.Type().(*types.Signature).Recv() == nil {
				n++ // the name called
				callees = append(callees, fn)
			}
		case *ast.BinaryExpr:
			if t, ok := info.Types[x].Type.Underlying().(*types.Basic); !ok || t.Info()&types.IsString == 0 || x.Op != token.ADD {
				n++ // a chain of string concatenations is one node
			}
		case *ast.SliceExpr:
			n++
			for _, e := range []ast.Expr{x.X, x.High, x.Max} {
				ast.Inspect(e, node)
			}
			if v := info.Types[x.Low].Value; x.Low != nil && (v == nil || v.String() != "0") {
				ast.Inspect(x.Low, node) // a constant 0 is dropped
			}
			return false
		case *ast.CompositeLit, *ast.TypeAssertExpr:
			n++
		case *ast.UnaryExpr:
			if x.Op != token.ADD {
				n++
			}
		case *ast.StarExpr:
			n++
		case *ast.IndexExpr:
			if _, generic := info.Instances[identOf(x.X)]; !generic {
				n++
			}
		case *ast.SelectorExpr:
			if sel, ok := info.Selections[x]; ok && sel.Kind() == types.FieldVal {
				n++
			}
			ast.Inspect(x.X, node)
			return false
		case *ast.KeyValueExpr:
			ast.Inspect(x.Value, node)
			return false
		}
		return true
	}
	stmts = func(list []ast.Stmt) {
		for _, s := range list {
			ast.Inspect(s, node)
			if ends(s) {
				return
			}
		}
	}
	stmts(body.List)
	return n, callees
}

// calleeFloor is the least a call of fn adds to its caller's cost beyond the
// call's node: the call's cost if the compiler cannot inline fn, else the
// smaller of that and fn's floor (the cost of fn's body, if inlined).
func calleeFloor(fn *types.Func, floors map[*types.Func]int, noInline map[*types.Func]bool) int {
	if fn == nil {
		return 0
	}
	fn = fn.Origin()
	if noInline[fn] {
		return extraCallCost
	}
	return min(extraCallCost, floors[fn])
}

// extraCallCost is what the compiler adds to its inlining cost for a call it
// does not inline (inlineExtraCallCost in cmd/compile/internal/inline).
const extraCallCost = 57

// isTypeParam reports whether t is a type parameter: a method call on one is
// no interface call once the function is instantiated.
func isTypeParam(t types.Type) bool {
	_, ok := types.Unalias(t).(*types.TypeParam)
	return ok
}

// allBlank reports whether every expression is the blank identifier.
func allBlank(list []ast.Expr) bool {
	for _, e := range list {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

// identOf is the identifier of a possibly qualified or parenthesized name.
func identOf(e ast.Expr) *ast.Ident {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return e
	case *ast.SelectorExpr:
		return e.Sel
	}
	return nil
}

// hasConstantOperand reports whether cond is constant or has a constant
// operand in its chain of && and ||: the compiler may drop a branch of it.
func hasConstantOperand(cond ast.Expr, info *types.Info) bool {
	if info.Types[cond].Value != nil {
		return true
	}
	if b, ok := ast.Unparen(cond).(*ast.BinaryExpr); ok && (b.Op == token.LAND || b.Op == token.LOR) {
		return hasConstantOperand(b.X, info) || hasConstantOperand(b.Y, info)
	}
	return false
}

// ends reports whether s ends its block: what follows it is dead.
func ends(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
		}
	}
	return false
}

// unusedImports turns the imports of f that only the stubbed bodies use into
// blank imports, which the compiler accepts unused.
func unusedImports(f *ast.File, stubs map[*ast.BlockStmt]bool, info *types.Info, off func(token.Pos) int) []edit {
	used := map[string]bool{} // import path
	dot := map[string]bool{}
	for _, spec := range f.Imports {
		if spec.Name != nil && spec.Name.Name == "." {
			path, _ := strconv.Unquote(spec.Path.Value)
			dot[path] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			return !stubs[n]
		case *ast.ImportSpec:
			return false
		case *ast.Ident:
			switch obj := info.Uses[n].(type) {
			case nil:
			case *types.PkgName:
				used[obj.Imported().Path()] = true
			default:
				// A dot import's name: a package-level object of it.
				if p := obj.Pkg(); p != nil && dot[p.Path()] && obj.Parent() == p.Scope() {
					used[p.Path()] = true
				}
			}
		}
		return true
	})
	var edits []edit
	for _, spec := range f.Imports {
		path, _ := strconv.Unquote(spec.Path.Value)
		if used[path] || path == "C" || (spec.Name != nil && spec.Name.Name == "_") {
			continue
		}
		start := spec.Path.Pos()
		if spec.Name != nil {
			start = spec.Name.Pos()
		}
		edits = append(edits, edit{off: off(start), del: off(spec.Path.Pos()) - off(start), text: "_ "})
	}
	return edits
}

// inliningDir is where the inlining pass writes its reduced files.
func inliningDir(workDir string) string { return filepath.Join(workDir, "inl") }
