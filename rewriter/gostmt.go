package rewriter

import (
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
)

// Go statements of instrumented functions (docs/design-notes.md, "Traces
// across goroutines").

// goWrapper is one generated wrapper.
type goWrapper struct {
	name   string
	file   string // absolute path of the go statement's file
	line   int
	fun    string   // what the go statement passes after the link: the function value, the method's receiver, or nothing
	first  string   // the wrapper's parameter for fun ("__tgf T", "__tgr T"), or ""
	callee string   // what the wrapper calls: __tgf, __tgr.Method, or a function by name
	params []string // types of the wrapper's parameters for the arguments
	dots   bool     // the last argument is passed on with "..."
}

// goStatements rewrites the go statements in fd's body, whose function has
// probe index probe.
//
// Those in a function literal with a probe of its own are the literal's.
func (pj *packageJob) goStatements(i int, fd *ast.FuncDecl, probe int) {
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			pj.goStatement(i, n, probe)
		case *ast.FuncLit:
			return !pj.probedLits[n.Body]
		}
		return true
	})
}

func (pj *packageJob) goStatement(i int, st *ast.GoStmt, probe int) {
	pos := pj.fset.Position(st.Pos())
	where := fmt.Sprintf("%s/%s:%d", pj.pkgPath, filepath.Base(pos.Filename), pos.Line)
	w, why := pj.planGo(i, st)
	if why != "" {
		pj.s.logf("%s: go statement not linked: %s", where, why)
		return
	}
	abs, err := filepath.Abs(pj.job.Files[i])
	if err != nil {
		abs = pj.job.Files[i]
	}
	w.name = fmt.Sprintf("__tigris_go%d", len(pj.goWrappers))
	w.file, w.line = abs, pos.Line
	pj.goWrappers = append(pj.goWrappers, w)
	pj.s.logf("%s: go statement linked through %s", where, w.name)

	// Fork is on the go statement's first line; the branch that links comes
	// first, so that for a go statement of a function value everything
	// tigris adds is on that line. For a literal it must follow the
	// literal, on the literal's last line.
	call := st.Call
	fork := fmt.Sprintf("%s.Fork(&%s[%d])", alias, probesVar, probe)
	fun := ""
	if w.fun != "" {
		fun = ", " + w.fun
	}
	linked := fmt.Sprintf("__tgl.On() { go %s(__tgl%s%s) } else { ", w.name, fun, pj.argsText(i, call))
	if _, lit := ast.Unparen(call.Fun).(*ast.FuncLit); lit {
		pj.edits[i] = append(pj.edits[i],
			edit{off: pj.off(st.Go), del: len("go"), text: "{ __tgl := " + fork + "; __tgf :="},
			edit{off: pj.off(call.Fun.End()), text: "; if " + linked + "go __tgf"},
			edit{off: pj.off(st.End()), text: " } }"})
		return
	}
	pj.edits[i] = append(pj.edits[i],
		edit{off: pj.off(st.Go), text: "if __tgl := " + fork + "; " + linked},
		edit{off: pj.off(st.End()), text: " }"})
}

// argsText is ", " and the call's arguments as written (with a final "..."),
// on one line; "" without arguments.
func (pj *packageJob) argsText(i int, call *ast.CallExpr) string {
	if len(call.Args) == 0 {
		return ""
	}
	s, _ := oneLine(pj.srcs[i][pj.off(call.Lparen)+1 : pj.off(call.Rparen)])
	return ", " + strings.TrimSpace(s)
}

// planGo checks that st can be rewritten and returns its wrapper, or why not.
func (pj *packageJob) planGo(i int, st *ast.GoStmt) (goWrapper, string) {
	call := st.Call
	src := pj.srcs[i]
	tv, ok := pj.info.Types[call.Fun]
	if !ok || tv.IsBuiltin() || tv.IsType() {
		return goWrapper{}, "a builtin"
	}
	sig, ok := tv.Type.Underlying().(*types.Signature)
	if !ok {
		return goWrapper{}, "the callee is no function"
	}
	if len(call.Args) == 1 {
		if _, tuple := pj.info.Types[call.Args[0]].Type.(*types.Tuple); tuple {
			return goWrapper{}, "its argument is a call with several results"
		}
	}
	_, lit := ast.Unparen(call.Fun).(*ast.FuncLit)
	copied := call.Args
	if !lit {
		copied = append([]ast.Expr{call.Fun}, call.Args...)
		if pj.uninstantiated(call.Fun) && !langAtLeast(pj.job.Lang, 21) {
			return goWrapper{}, "a generic function whose type arguments are inferred (needs go1.21)"
		}
	}
	for _, e := range copied {
		if hasFuncLit(e) {
			return goWrapper{}, "a function literal among the function value and arguments"
		}
		if _, ok := oneLine(src[pj.off(e.Pos()):pj.off(e.End())]); !ok {
			return goWrapper{}, "its arguments span lines with comments or raw strings"
		}
	}
	if len(call.Args) > 0 {
		if _, ok := oneLine(src[pj.off(call.Lparen)+1 : pj.off(call.Rparen)]); !ok {
			return goWrapper{}, "its arguments span lines with comments"
		}
	}
	w := goWrapper{fun: "__tgf"}
	imported := len(pj.goImports)
	fail := func(t types.Type) (goWrapper, string) {
		pj.goImports = pj.goImports[:imported] // imports of a wrapper that will not be written
		return goWrapper{}, fmt.Sprintf("the type %s cannot be named in generated code", types.TypeString(t, nil))
	}
	if !lit {
		w.fun, _ = oneLine(src[pj.off(call.Fun.Pos()):pj.off(call.Fun.End())])
	}
	if name, ok := pj.staticCallee(call.Fun); ok {
		w.fun, w.callee = "", name // called by name: as direct a call as the go statement's own
	} else if se, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && pj.info.Selections[se] != nil && pj.info.Selections[se].Kind() == types.MethodVal {
		if recv, rt, ok := pj.receiver(i, se, pj.info.Selections[se]); ok {
			w.fun, w.first, w.callee = recv, "__tgr "+rt, "__tgr."+se.Sel.Name
		}
	}
	if w.callee == "" {
		ft, ok := pj.spell(sig)
		if !ok {
			return fail(sig)
		}
		w.first, w.callee = "__tgf "+ft, "__tgf"
	}
	// The wrapper's parameters are the callee's, except that the arguments
	// of a variadic call without "..." are passed one by one, as the
	// compiler's own closure for the go statement takes them: the slice is
	// made in the goroutine, as in the plain go statement.
	params := sig.Params()
	for k := 0; k < len(call.Args); k++ {
		var t types.Type
		switch last := params.Len() - 1; {
		case !sig.Variadic() || k < last:
			t = params.At(k).Type()
		case call.Ellipsis.IsValid():
			t, w.dots = params.At(last).Type().(*types.Slice).Elem(), true
		default:
			t = params.At(last).Type().(*types.Slice).Elem()
		}
		p, ok := pj.spell(t)
		if !ok {
			return fail(t)
		}
		if w.dots {
			p = "..." + p
		}
		w.params = append(w.params, p)
	}
	return w, ""
}

// staticCallee returns how the generated file calls fun when it names a
// function declared at package level (not generic): its name, qualified by
// the generated file's import of its package.
func (pj *packageJob) staticCallee(fun ast.Expr) (string, bool) {
	var id *ast.Ident
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if pj.info.Selections[f] != nil {
			return "", false // a method or a field
		}
		id = f.Sel
	default:
		return "", false
	}
	fn, ok := pj.info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Type().(*types.Signature).TypeParams().Len() > 0 || fn.Parent() != fn.Pkg().Scope() {
		return "", false
	}
	switch {
	case fn.Pkg() == pj.pkg:
		return fn.Name(), true
	case fn.Exported() && pj.imports(fn.Pkg()):
		return pj.goImport(fn.Pkg().Path()) + "." + fn.Name(), true
	}
	return "", false
}

// receiver returns, for a go statement of method call se, the receiver the
// method value se would bind, as the text that evaluates it in the parent
// (the embedded fields it is promoted through spelled out, & or * where Go
// takes the address or dereferences implicitly), and its type as the
// generated file names it. Binding the receiver rather than the method value
// evaluates the same things at the same time and allocates no method value.
// false when a field on the way or the type cannot be named there: the
// wrapper then takes the method value.
func (pj *packageJob) receiver(i int, se *ast.SelectorExpr, sel *types.Selection) (string, string, bool) {
	x, ok := oneLine(pj.srcs[i][pj.off(se.X.Pos()):pj.off(se.X.End())])
	if !ok {
		return "", "", false
	}
	if _, ident := ast.Unparen(se.X).(*ast.Ident); !ident {
		x = "(" + x + ")"
	}
	typ := pj.info.Types[se.X].Type
	path := sel.Index()
	for _, k := range path[:len(path)-1] {
		t := typ.Underlying()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem().Underlying()
		}
		st, ok := t.(*types.Struct)
		if !ok {
			return "", "", false
		}
		f := st.Field(k)
		if !f.Exported() && f.Pkg() != pj.pkg {
			return "", "", false
		}
		x += "." + f.Name()
		typ = f.Type()
	}
	fn, ok := sel.Obj().(*types.Func)
	if !ok {
		return "", "", false
	}
	_, wantPtr := fn.Type().(*types.Signature).Recv().Type().(*types.Pointer)
	ptr, havePtr := typ.(*types.Pointer)
	switch {
	case types.IsInterface(typ):
	case wantPtr && !havePtr:
		x, typ = "&"+x, types.NewPointer(typ)
	case !wantPtr && havePtr:
		x, typ = "*"+x, ptr.Elem()
	}
	imported := len(pj.goImports)
	rt, ok := pj.spell(typ)
	if !ok {
		pj.goImports = pj.goImports[:imported]
		return "", "", false
	}
	return x, rt, true
}

// uninstantiated reports whether fun names a generic function without type
// arguments (they are inferred from the call).
func (pj *packageJob) uninstantiated(fun ast.Expr) bool {
	var id *ast.Ident
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if _, ok := pj.info.Selections[f]; ok {
			return false // a method value: its type is complete
		}
		id = f.Sel
	default:
		return false
	}
	fn, ok := pj.info.Uses[id].(*types.Func)
	return ok && fn.Type().(*types.Signature).TypeParams().Len() > 0
}

// langAtLeast reports whether a package compiled with -lang=lang may use
// features of go1.minor (no -lang: yes).
func langAtLeast(lang string, minor int) bool {
	v, ok := strings.CutPrefix(lang, "go1.")
	if !ok {
		return true
	}
	if i := strings.IndexByte(v, '.'); i >= 0 {
		v = v[:i]
	}
	n, err := strconv.Atoi(v)
	return err != nil || n >= minor
}

func hasFuncLit(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			found = true
		}
		return !found
	})
	return found
}

// oneLine returns src with its line breaks turned into spaces, or false when
// that would change its meaning: a comment (a // comment would swallow the
// rest of the line) or a raw string holding a line break. Inside a call's
// arguments a line break never stands for a semicolon, so outside those two it
// is plain white space.
func oneLine(src []byte) (string, bool) {
	if !strings.ContainsAny(string(src), "\r\n") {
		return string(src), true
	}
	var s scanner.Scanner
	fs := token.NewFileSet()
	s.Init(fs.AddFile("", -1, len(src)), src, nil, scanner.ScanComments)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT || tok == token.STRING && strings.HasPrefix(lit, "`") && strings.ContainsAny(lit, "\r\n") {
			return "", false
		}
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(string(src), "\r", " ")), " "), true
}

// spell returns t as the generated file writes it: types of this package by
// their names, types of packages it imports through the generated file's own
// imports (goImport), false for a type that file cannot name.
func (pj *packageJob) spell(t types.Type) (string, bool) {
	var b strings.Builder
	ok := pj.spellTo(&b, t)
	return b.String(), ok
}

func (pj *packageJob) spellTo(b *strings.Builder, t types.Type) bool {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			b.WriteString(pj.goImport("unsafe") + ".Pointer")
			return true
		}
		if t.Info()&types.IsUntyped != 0 {
			return false
		}
		b.WriteString(t.Name())
		return true
	case *types.Named:
		obj := t.Obj()
		switch {
		case obj.Pkg() == nil: // error, comparable
		case obj.Pkg() == pj.pkg:
			if obj.Parent() != pj.pkg.Scope() {
				return false // declared inside a function
			}
		default:
			if !obj.Exported() || !pj.imports(obj.Pkg()) {
				return false
			}
			b.WriteString(pj.goImport(obj.Pkg().Path()) + ".")
		}
		b.WriteString(obj.Name())
		if args := t.TypeArgs(); args.Len() > 0 {
			b.WriteByte('[')
			for k := 0; k < args.Len(); k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				if !pj.spellTo(b, args.At(k)) {
					return false
				}
			}
			b.WriteByte(']')
		}
		return true
	case *types.Pointer:
		b.WriteByte('*')
		return pj.spellTo(b, t.Elem())
	case *types.Slice:
		b.WriteString("[]")
		return pj.spellTo(b, t.Elem())
	case *types.Array:
		fmt.Fprintf(b, "[%d]", t.Len())
		return pj.spellTo(b, t.Elem())
	case *types.Map:
		b.WriteString("map[")
		if !pj.spellTo(b, t.Key()) {
			return false
		}
		b.WriteByte(']')
		return pj.spellTo(b, t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			b.WriteString("chan<- ")
		case types.RecvOnly:
			b.WriteString("<-chan ")
		default:
			b.WriteString("chan ")
			if e, ok := types.Unalias(t.Elem()).(*types.Chan); ok && e.Dir() == types.RecvOnly {
				b.WriteByte('(')
				ok := pj.spellTo(b, e)
				b.WriteByte(')')
				return ok
			}
		}
		return pj.spellTo(b, t.Elem())
	case *types.Signature:
		if t.TypeParams().Len() > 0 {
			return false
		}
		b.WriteString("func")
		if !pj.spellTuple(b, t.Params(), t.Variadic(), true) {
			return false
		}
		if n := t.Results().Len(); n > 0 {
			b.WriteByte(' ')
			return pj.spellTuple(b, t.Results(), false, n > 1)
		}
		return true
	case *types.Interface:
		if t.Empty() && t.IsMethodSet() {
			b.WriteString("interface{}")
			return true
		}
		return false
	case *types.Struct:
		b.WriteString("struct{")
		for k := 0; k < t.NumFields(); k++ {
			f := t.Field(k)
			if k > 0 {
				b.WriteString("; ")
			}
			if !f.Exported() && f.Pkg() != pj.pkg {
				return false
			}
			if !f.Embedded() {
				b.WriteString(f.Name() + " ")
			}
			if !pj.spellTo(b, f.Type()) {
				return false
			}
			if tag := t.Tag(k); tag != "" {
				b.WriteString(" " + strconv.Quote(tag))
			}
		}
		b.WriteByte('}')
		return true
	}
	return false // type parameters, and anything else
}

func (pj *packageJob) spellTuple(b *strings.Builder, tup *types.Tuple, variadic, parens bool) bool {
	if parens {
		b.WriteByte('(')
	}
	for k := 0; k < tup.Len(); k++ {
		if k > 0 {
			b.WriteString(", ")
		}
		t := tup.At(k).Type()
		if variadic && k == tup.Len()-1 {
			b.WriteString("...")
			t = t.(*types.Slice).Elem()
		}
		if !pj.spellTo(b, t) {
			return false
		}
	}
	if parens {
		b.WriteByte(')')
	}
	return true
}

// imports reports whether the package being compiled imports p directly: only
// those are in its importcfg, so only those can the generated file import.
func (pj *packageJob) imports(p *types.Package) bool {
	for _, q := range pj.pkg.Imports() {
		if q == p {
			return true
		}
	}
	return p.Path() == "unsafe"
}

// goImport returns the generated file's name for the package at path,
// importing it on first use.
func (pj *packageJob) goImport(path string) string {
	for k, p := range pj.goImports {
		if p == path {
			return fmt.Sprintf("__tigris_i%d", k)
		}
	}
	pj.goImports = append(pj.goImports, path)
	return fmt.Sprintf("__tigris_i%d", len(pj.goImports)-1)
}

// goWrapperSource is the source of the wrappers, each on one line after a
// //line directive naming its go statement, so that a goroutine's traceback
// shows the wrapper where the go statement is.
func (pj *packageJob) goWrapperSource() string {
	var b strings.Builder
	for _, w := range pj.goWrappers {
		fmt.Fprintf(&b, "\n//line %s:%d\nfunc %s(__tgl %s.Link", w.file, w.line, w.name, alias)
		if w.first != "" {
			b.WriteString(", " + w.first)
		}
		var call []string
		for k, p := range w.params {
			fmt.Fprintf(&b, ", __tga%d %s", k, p)
			a := fmt.Sprintf("__tga%d", k)
			if w.dots && k == len(w.params)-1 {
				a += "..."
			}
			call = append(call, a)
		}
		fmt.Fprintf(&b, ") { __tgl.Adopt(); %s(%s) }\n", w.callee, strings.Join(call, ", "))
	}
	return b.String()
}
