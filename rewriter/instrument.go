package rewriter

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tigrisgo/tigris/config"
)

const (
	tigrisModule = "github.com/tigrisgo/tigris"
	monitorPath  = runtimeModule + "/monitor"
	adminPath    = monitorPath + "/admin"
	atexitPath   = monitorPath + "/atexit"
	analyzerPath = monitorPath + "/analyzer"
	// Generated names carry a prefix no user writes, so they cannot collide.
	alias         = "__tigris"
	atexitAlias   = "__tigris_atexit"
	analyzerAlias = "__tigris_analyzer"
	adminAlias    = "__tigris_admin"
	probesVar     = "__tigris_p"
)

// neverInstrument lists packages whose functions run underneath the monitor's own
// hot path or that the compiler treats specially: probing them would recurse or
// break the toolchain's assumptions, whatever the configuration says.
var neverInstrument = map[string]bool{
	"runtime": true, "unsafe": true, "sync": true, "sync/atomic": true, "math": true,
	"syscall": true, "os": true, "time": true, "reflect": true, "errors": true,
	"unicode/utf8": true, "strconv": true, "io": true, "os/signal": true, "fmt": true,
}

// packageJob is the state of instrumenting one package.
type packageJob struct {
	s       *Session
	job     *CompileJob
	pkgPath string // import path as users write it in pointcuts
	fset    *token.FileSet
	files   []*ast.File
	srcs    [][]byte
	info    *types.Info
	decls   func(*types.Func) *ast.FuncDecl // built on first use (small)
	probes  []probeDesc
	edits   [][]edit // per file
	// callProbes maps a matched callee to its probe: all call sites of one callee
	// in the package share it. callSeq numbers the sites' variables.
	callProbes map[string]int
	callSeq    int
	// pkg is the type-checked package; goWrappers and goImports are what
	// the rewritten go statements add to the generated file (gostmt.go).
	pkg        *types.Package
	goWrappers []goWrapper
	goImports  []string
	// keepDecls are the functions whose literals have candidates: the
	// inlining pass keeps their bodies, where the compiler judges the
	// literals. probedLits are the bodies of the literals that get probes.
	keepDecls  map[*ast.FuncDecl]bool
	probedLits map[*ast.BlockStmt]bool
}

// probeDesc is what the probe table records about one instrumented function.
type probeDesc struct {
	sig        signatureLit
	cyclomatic int
	statements int
}

// Instrument rewrites job.Files for one compile when the config matches the package.
func (s *Session) Instrument(job *CompileJob) (bool, error) {
	if !s.Active() {
		return false, nil
	}
	if why := s.packageExcluded(job.ImportPath, job.Std); why != "" {
		return false, nil
	}
	pkgPath := sourceImportPath(job)
	if !s.cfg.Instrument.MayMatchPackageOf(pkgPath, job.ImportPath == "main") {
		s.logf("%s: skipped, no pointcut can match the package", pkgPath)
		return false, nil
	}
	pj := &packageJob{s: s, job: job, pkgPath: pkgPath, fset: token.NewFileSet(), callProbes: map[string]int{}}
	if err := pj.parse(); err != nil {
		return false, err
	}
	if err := pj.typeCheck(); err != nil {
		// The compiler reports the user's own errors better than we could.
		return false, fmt.Errorf("type-checking %s: %w", pkgPath, err)
	}
	pj.edits = make([][]edit, len(pj.files))
	cands := pj.candidates()
	if len(cands) == 0 {
		return false, nil
	}
	if (s.cfg.Inlinable != config.InlinableProbe || s.cfg.Small != config.SmallProbe) && job.Inlinable != nil {
		var reduced []string
		if job.ReduceInlining {
			pj.keepDecls = map[*ast.FuncDecl]bool{}
			for _, c := range cands {
				if c.host != nil {
					pj.keepDecls[c.host] = true
				}
			}
			files, stubbed, err := pj.inliningFiles(inliningDir(job.WorkDir))
			if err != nil {
				return false, fmt.Errorf("writing the inlining pass's files: %w", err)
			}
			if stubbed > 0 {
				reduced = files
			}
			s.logf("%s: inlining pass: %d of the package's function bodies stubbed", pkgPath, stubbed)
		}
		inl, err := job.Inlinable(reduced)
		if err != nil {
			return false, fmt.Errorf("finding the functions the compiler inlines: %w", err)
		}
		cands = pj.withoutSkipped(cands, inl)
	}
	pj.probedLits = map[*ast.BlockStmt]bool{}
	for _, c := range cands {
		if c.lit != nil && c.exec {
			pj.probedLits[c.lit.Body] = true
		}
	}
	for _, c := range cands {
		pj.instrument(c)
	}
	if len(pj.probes) == 0 {
		return false, nil
	}
	return true, pj.write()
}

// candidate is a function that gets a probe or has call sites that may: its
// declaration and signature, and whether its execution matches. For a
// function literal, lit is set, fn is nil and fd is made of the literal's
// type and body, without name or receiver.
type candidate struct {
	file int
	fd   *ast.FuncDecl
	fn   *types.Func
	lit  *ast.FuncLit
	host *ast.FuncDecl // a literal's function; nil in a package-level initializer
	sig  signatureLit
	exec bool
}

// signature is the candidate's Go signature.
func (pj *packageJob) signature(c candidate) *types.Signature {
	if c.lit != nil {
		return pj.info.TypeOf(c.lit).(*types.Signature)
	}
	return c.fn.Type().(*types.Signature)
}

// candidates returns the package's functions whose execution matches the
// config or, when the config has call(...) terms, whose body may hold a
// matched call site.
func (pj *packageJob) candidates() []candidate {
	var out []candidate
	for i, f := range pj.files {
		if base := filepath.Base(pj.job.Files[i]); strings.HasPrefix(base, "_cgo_") || strings.HasPrefix(base, "_testmain") {
			continue // cgo's generated glue, go test's generated main
		}
		linknamed := linknamedFuncs(f)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !instrumentable(fd, linknamed) {
				continue
			}
			fn, ok := pj.info.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			pos := pj.fset.Position(fd.Pos())
			file := pj.pkgPath + "/" + filepath.Base(pos.Filename)
			sig := SignatureOf(pj.pkgPath, fn, file, pos.Line)
			exec := pj.s.cfg.Instrument.MatchExecution(&sig)
			if !exec {
				pj.s.logf("%s:%d: %s: not matched", file, pos.Line, sig.Name)
			}
			if exec || pj.s.cfg.Instrument.HasCall() {
				out = append(out, candidate{file: i, fd: fd, fn: fn, sig: signatureLit(sig), exec: exec})
			}
		}
	}
	if pj.s.cfg.Instrument.HasLiteral() {
		out = append(out, pj.literalCandidates()...)
	}
	return out
}

// literalCandidates returns the function literals whose execution matches:
// only a pointcut that names literals selects one (pointcut.HasLiteral). A
// literal in code the compiler leaves out has no name and no probe, and so
// does one in a function that is never instrumented (linknamed, nosplit…);
// func init is, for its literals, a function like any other.
func (pj *packageJob) literalCandidates() []candidate {
	names := literalNames(pj.files, pj.info, toolchainRangeScopes)
	encl := map[*ast.FuncDecl]signatureLit{}
	var out []candidate
	for i, f := range pj.files {
		if base := filepath.Base(pj.job.Files[i]); strings.HasPrefix(base, "_cgo_") || strings.HasPrefix(base, "_testmain") {
			continue
		}
		linknamed := linknamedFuncs(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				isInit := fd.Recv == nil && fd.Name.Name == "init"
				return fd.Body != nil && (isInit || instrumentable(fd, linknamed))
			}
			fl, ok := n.(*ast.FuncLit)
			if !ok {
				return true
			}
			name, ok := names[fl]
			sigT, isSig := pj.info.TypeOf(fl).(*types.Signature)
			if !ok || !isSig {
				return true
			}
			pos := pj.fset.Position(fl.Pos())
			file := pj.pkgPath + "/" + filepath.Base(pos.Filename)
			host, fnName := signatureLit{}, "init"
			if d := name.decl; d != nil {
				fnName = d.Name.Name
				if d.Recv == nil && fnName == "init" {
					fnName = name.outer // init.0
				}
				if _, ok := encl[d]; !ok {
					if fn, ok := pj.info.Defs[d.Name].(*types.Func); ok {
						encl[d] = SignatureOf(pj.pkgPath, fn, file, 0)
					}
				}
				host = encl[d]
			}
			sig := LiteralSignatureOf(pj.pkgPath, f.Name.Name, host, fnName, name.lit, sigT, file, pos.Line)
			if pj.s.cfg.Instrument.MatchExecution(&sig) {
				fd := &ast.FuncDecl{Name: &ast.Ident{NamePos: fl.Pos(), Name: "func"}, Type: fl.Type, Body: fl.Body}
				out = append(out, candidate{file: i, fd: fd, lit: fl, host: name.decl, sig: sig, exec: true})
			} else {
				pj.s.logf("%s:%d: %s: not matched", file, pos.Line, sig.Name+sig.Lit)
			}
			return true
		})
	}
	return out
}

// withoutSkipped drops the candidates the compiler inlines in the plain
// build (monitor.inlinable: skip): a probe would stop the inlining and so
// change what escapes to the heap at every caller; and those too small to be
// worth a probe (monitor.small: skip; smallBody). A function that an include
// names exactly gets a notice for the user.
func (pj *packageJob) withoutSkipped(cands []candidate, inl Inlining) []candidate {
	out := cands[:0]
	for _, c := range cands {
		pos := pj.fset.Position(c.fd.Name.Pos())
		key := fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
		inlined, sizes := inl.Inlined, inl.Size
		if c.lit != nil { // known by their column too: a line can hold several
			key += fmt.Sprintf(":%d", pos.Column)
			inlined, sizes = inl.Lits, inl.LitSize
		}
		why := ""
		switch {
		case pj.s.cfg.Inlinable != config.InlinableProbe && inlined[key]:
			why = "the compiler inlines it, and a probe would change inlining and escapes (monitor.inlinable: probe instruments it anyway)"
		case pj.s.cfg.Small != config.SmallProbe && pj.small(c.fd, sizes[key], inl.Calls):
			why = smallReason(sizes[key])
		}
		if why == "" {
			out = append(out, c)
			continue
		}
		pj.s.logf("%s:%d: %s: not instrumented: %s", c.sig.File, c.sig.Line, c.sig.Name+c.sig.Lit, why)
		if c.exec && pj.s.cfg.Instrument.NamesExactly(&c.sig) {
			pj.job.Notices = append(pj.job.Notices, fmt.Sprintf("%s: %s is named by monitor.include but gets no probe: %s", pos, qualifiedName(&c.sig), why))
		}
	}
	return out
}

// small is smallBody for a function of this package.
func (pj *packageJob) small(fd *ast.FuncDecl, size int, calls map[string]bool) bool {
	if pj.decls == nil {
		pj.decls = funcDecls(pj.files, pj.info)
	}
	return smallBody(fd, size, pj.info, pj.fset, func(p token.Position) bool {
		return calls[fmt.Sprintf("%s:%d:%d", filepath.Base(p.Filename), p.Line, p.Column)]
	}, pj.decls)
}

// qualifiedName is the function's name as a pointcut writes it:
// example.com/shop.(*Store).Find.
func qualifiedName(s *signatureLit) string {
	switch {
	case s.Recv == "":
		return s.Package + "." + s.Name + s.Lit
	case s.RecvPtr:
		return s.Package + ".(*" + s.Recv + ")." + s.Name + s.Lit
	}
	return s.Package + "." + s.Recv + "." + s.Name + s.Lit
}

// instrument plans the edits of one candidate: the probe prologue right after
// the function's opening brace, its go statements (gostmt.go: a goroutine
// started inside a trace begins a linked trace), and brackets around matched
// call sites. Nothing else of the program changes: the writer is flushed at
// exit by the monitor's exit hook, not by edits of main or os.Exit.
func (pj *packageJob) instrument(c candidate) {
	if c.exec {
		prologue, end := pj.probe(c)
		// In this order: an empty body has both at one offset.
		pj.edits[c.file] = append(pj.edits[c.file], edit{off: pj.off(c.fd.Body.Lbrace) + 1, text: " " + prologue})
		if end != "" {
			pj.edits[c.file] = append(pj.edits[c.file], edit{off: pj.off(c.fd.Body.Rbrace), text: end})
		}
		pj.goStatements(c.file, c.fd, len(pj.probes)-1)
	}
	if pj.s.cfg.Instrument.HasCall() && c.fn != nil {
		pj.callSites(c.file, c.fd, c.fn)
	}
}

// sourceImportPath is the package's import path without the test-variant suffix:
// "example.com/shop/repo [example.com/shop/repo.test]" → "example.com/shop/repo".
func sourceImportPath(job *CompileJob) string {
	p := job.ToolexecImportPath
	if i := strings.Index(p, " ["); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		p = job.ImportPath
	}
	return p
}

func (pj *packageJob) parse() error {
	for _, name := range pj.job.Files {
		src, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(pj.fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pj.files = append(pj.files, f)
		pj.srcs = append(pj.srcs, src)
	}
	return nil
}

// typeCheck uses the export data the go command already listed in -importcfg.
func (pj *packageJob) typeCheck() error {
	lookup := func(path string) (io.ReadCloser, error) {
		if m, ok := pj.job.ImportMap[path]; ok {
			path = m
		}
		file, ok := pj.job.ImportCfg[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q in importcfg", path)
		}
		return os.Open(file)
	}
	var firstErr error
	conf := types.Config{
		Importer:  importer.ForCompiler(pj.fset, "gc", lookup),
		GoVersion: pj.job.Lang,
		Sizes:     types.SizesFor("gc", build.Default.GOARCH),
		Error: func(err error) {
			if firstErr == nil {
				firstErr = err
			}
		},
	}
	pj.info = &types.Info{
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Types:      map[ast.Expr]types.TypeAndValue{},
		Scopes:     map[ast.Node]*types.Scope{},
		Instances:  map[*ast.Ident]types.Instance{}, // generic uses (inlpass.go)
	}
	pkg, err := conf.Check(pj.job.ImportPath, pj.fset, pj.files, pj.info)
	if err != nil && firstErr == nil {
		firstErr = err
	}
	pj.pkg = pkg
	return firstErr
}

func (pj *packageJob) off(p token.Pos) int { return pj.fset.File(p).Offset(p) }

// packageExcluded says why no function of the package is ever instrumented, or ""
// when its functions are matched against the config.
func (s *Session) packageExcluded(importPath string, std bool) string {
	switch {
	case strings.HasPrefix(importPath, tigrisModule+"/examples/"):
		return "" // programs users run, like any other
	case importPath == tigrisModule || strings.HasPrefix(importPath, tigrisModule+"/"):
		return "tigris's own package"
	case neverInstrument[importPath]:
		return "runs underneath the monitor"
	case std && (strings.HasPrefix(importPath, "internal/") || strings.Contains(importPath, "/internal/")):
		return "internal package of the standard library"
	case std && !s.cfg.Std:
		return "standard library (set std: true to opt in)"
	}
	return ""
}

func instrumentable(fd *ast.FuncDecl, linknamed map[string]bool) bool {
	return notInstrumentable(fd, linknamed) == ""
}

// notInstrumentable says why fd is never probed (functions the compiler or
// runtime treat specially), or "" when it can be.
func notInstrumentable(fd *ast.FuncDecl, linknamed map[string]bool) string {
	switch {
	case fd.Body == nil:
		return "no body (assembly or linkname)"
	case fd.Name.Name == "_" || fd.Name.Name == "init":
		return "init and blank functions are not callable"
	case linknamed[fd.Name.Name]:
		return "named in a //go:linkname directive"
	}
	if fd.Doc != nil {
		for _, c := range fd.Doc.List {
			for _, d := range specialDirectives {
				if strings.HasPrefix(c.Text, d) {
					return "marked " + d
				}
			}
		}
	}
	return ""
}

// specialDirectives make the compiler treat a function in ways a probe's defer
// and calls would break.
var specialDirectives = []string{
	"//go:nosplit", "//go:norace", "//go:systemstack", "//go:nowritebarrier",
	"//go:linkname", "//go:uintptrescapes", "//go:yeswritebarrierrec", "//go:nocheckptr",
}

// linknamedFuncs collects local names mentioned in //go:linkname directives.
func linknamedFuncs(f *ast.File) map[string]bool {
	m := map[string]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if fields := strings.Fields(c.Text); len(fields) >= 2 && fields[0] == "//go:linkname" {
				m[fields[1]] = true
			}
		}
	}
	return m
}

// probe registers a probe for a matched function and returns the text that
// goes right after its opening brace and right before its closing one; it
// adds the edits of the function's results and returns.
//
// A function without a defer statement of its own gets a probe without a
// defer (unless monitor.panics: all): its prologue starts the call only when
// the probe is on and keeps a pointer to it, and each return assigns the
// returned values to the (named) results, ends the call with them and
// returns. With its probe off such a function runs the plain code plus one
// load and one branch at entry and a test at each return: no defer
// bookkeeping and no results in memory, which any defer statement in a
// function costs (the compiler keeps a deferring function's results in its
// frame). (Sending every return to one label instead made the compiler merge
// the results of all returns there, costing big functions more than the
// tests.) A function with defers of its own keeps the deferred exit, which
// reads its results after those defers ran and sees panics; its returns go
// to one label so that the compiler keeps its open-coded defers (which it
// refuses for more than 15 returns times defers).
func (pj *packageJob) probe(c candidate) (prologue, end string) {
	id := len(pj.probes)
	cyc, stmts := staticMetrics(c.fd.Body)
	pj.probes = append(pj.probes, probeDesc{sig: c.sig, cyclomatic: cyc, statements: stmts})
	pj.s.logf("%s:%d: %s: instrumented as probe %d", c.sig.File, c.sig.Line, c.sig.Name+c.sig.Lit, id)
	if pj.s.cfg.Floor {
		return fmt.Sprintf("if %s[%d].On() { %s.Floor(&%s[%d]) };", probesVar, id, alias, probesVar, id), ""
	}
	sig := pj.signature(c)
	rets := returnStmts(c.fd.Body)
	hasResults := sig.Results().Len() > 0
	var names []string
	if hasResults {
		names = pj.nameResults(c.file, c.fd.Type.Results)
	}
	// A user's result name shadowed at a return would take the assignment
	// the rewritten return makes (rare): such a function keeps its returns
	// and a deferred exit.
	shadowed := len(rets) > 0 && pj.resultShadowed(c.fd, names, rets)
	deferred := pj.s.cfg.Panics == config.PanicsAll || hasDefer(c.fd.Body) || pj.isMainMain(c.fd) ||
		shadowed ||
		hasResults && len(rets) == 0 // never returns: nothing to end at a return
	start := fmt.Sprintf("if %s[%d].On() { __tg := %s.Start(&%s[%d]); ", probesVar, id, alias, probesVar, id) + pj.joinCall(sig)
	if !deferred {
		// Each return ends a started call with the values it returns;
		// a function without results ends it at its closing brace too.
		done := pj.doneCall(sig, names, pj.universalAt(c.fd, rets))
		pj.returnsThrough(c.file, names, rets, done+"; return")
		if !hasResults {
			end = "; " + done + "; "
		}
		return "var __tgc *" + alias + ".Call; " + start + "__tgc = &__tg };", end
	}
	prologue = start + "defer " + pj.exitCall(sig, names) + " };"
	if len(rets) > 0 && !shadowed && !redeclaresOuter(c.fd) {
		// One return, so the compiler keeps its open-coded defers.
		pj.returnsThrough(c.file, names, rets, "goto "+labelRet)
		prologue += " {"
		end = "}; " + labelRet + ": "
		if hasResults {
			end += "return "
		}
	}
	return prologue, end
}

// joinCall is the statement that hands a trace root the request it serves
// (runtime/monitor/join.go), for a function whose parameters include a
// context.Context or an *http.Request (the first of them), "" for others.
// It runs only where Start began a root that looks for its remote parent:
// the off and coarse paths pass it with one test of the Call. A parameter
// without a usable name (none, or _) is not handed.
func (pj *packageJob) joinCall(sig *types.Signature) string {
	params := sig.Params()
	for i := 0; i < params.Len(); i++ {
		v := params.At(i)
		if v.Name() == "" || v.Name() == "_" {
			continue
		}
		switch t := types.Unalias(v.Type()); {
		case isNamed(t, "context", "Context"):
			return fmt.Sprintf("if __tg.Joins() { %s.JoinContext(&__tg, %s) }; ", alias, v.Name())
		case isRequest(t):
			return fmt.Sprintf("if __tg.Joins() && %[2]s != nil { %[1]s.JoinRequest(&__tg, %[2]s.Context(), %[2]s.Header) }; ", alias, v.Name())
		}
	}
	return ""
}

// isNamed reports whether t is the named type pkg.name.
func isNamed(t types.Type, pkg, name string) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}

// isRequest reports whether t is *net/http.Request.
func isRequest(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	return ok && isNamed(p.Elem(), "net/http", "Request")
}

// isMainMain reports whether fd is the program's main function. It defers
// its exit whatever it holds: it runs once, and a panic that ends the program
// on the main goroutine passes its deferred exit, which flushes the trace.
func (pj *packageJob) isMainMain(fd *ast.FuncDecl) bool {
	return pj.job.ImportPath == "main" && fd.Recv == nil && fd.Name.Name == "main"
}

// labelRet is the label of an instrumented function's single return.
const labelRet = "__tigris_ret"

// returnsThrough turns each return statement of the function (rets) into an
// assignment of its values to the named results followed by then (a goto to
// labelRet, or the call that ends the probe's call and a bare return); a bare
// return becomes then alone. Every edit stays on the statement's lines.
func (pj *packageJob) returnsThrough(i int, names []string, rets []*ast.ReturnStmt, then string) {
	for _, r := range rets {
		if len(r.Results) == 0 {
			pj.edits[i] = append(pj.edits[i], edit{off: pj.off(r.Return), del: len("return"), text: "{ " + then + " }"})
			continue
		}
		pj.edits[i] = append(pj.edits[i],
			edit{off: pj.off(r.Return), del: len("return"), text: "{ " + strings.Join(names, ", ") + " ="},
			edit{off: pj.off(r.End()), text: "; " + then + " }"})
	}
}

// resultShadowed reports whether a user's result name is declared anew in a
// block holding one of rets that returns values: assigning to the name there
// would set the inner variable, not the result.
func (pj *packageJob) resultShadowed(fd *ast.FuncDecl, names []string, rets []*ast.ReturnStmt) bool {
	scope := pj.info.Scopes[fd.Type]
	if scope == nil || fd.Type.Results == nil {
		return false
	}
	results := map[string]types.Object{}
	for _, f := range fd.Type.Results.List {
		for _, id := range f.Names {
			if obj := pj.info.Defs[id]; obj != nil && id.Name != "_" {
				results[id.Name] = obj
			}
		}
	}
	if len(results) == 0 {
		return false
	}
	for _, r := range rets {
		if len(r.Results) == 0 {
			continue
		}
		inner := scope.Innermost(r.Pos())
		if inner == nil {
			continue
		}
		for name, obj := range results {
			if _, found := inner.LookupParent(name, r.Pos()); found != obj {
				return true
			}
		}
	}
	return false
}

// redeclaresOuter reports whether a statement at the top level of fd's body
// is a short variable declaration that assigns a receiver, parameter or
// result (r, w := f() with r a named result): inside the block the single
// return wraps the body in, it would declare a new variable instead, and the
// function would return the outer one.
func redeclaresOuter(fd *ast.FuncDecl) bool {
	outer := map[string]bool{}
	for _, fl := range []*ast.FieldList{fd.Recv, fd.Type.Params, fd.Type.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, id := range f.Names {
				outer[id.Name] = true
			}
		}
	}
	for _, st := range fd.Body.List {
		if as, ok := st.(*ast.AssignStmt); ok && as.Tok == token.DEFINE {
			for _, l := range as.Lhs {
				if id, ok := l.(*ast.Ident); ok && outer[id.Name] {
					return true
				}
			}
		}
	}
	return false
}

// returnStmts returns the function's own return statements (not those of
// function literals in it).
func returnStmts(body *ast.BlockStmt) []*ast.ReturnStmt {
	var rets []*ast.ReturnStmt
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			rets = append(rets, n)
		}
		return true
	})
	return rets
}

// hasDefer reports whether the function has a defer statement of its own.
func hasDefer(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// exitCall returns the deferred exit call. Functions returning an error or a
// result with a cheap size have their results named (names) and the exit
// reads them through pointers taken at entry, so it sees the values actually
// returned. No closure is deferred: a closure would take the name f.func1 and
// renumber the function's own literals, which tracebacks and profiles show.
func (pj *packageJob) exitCall(sig *types.Signature, names []string) string {
	errIdx, kind := pj.resultKinds(sig)
	if errIdx < 0 && kind == "" {
		return "__tg.Exit(nil)"
	}
	if kind == "" {
		return fmt.Sprintf("__tg.ExitErr(&%s)", names[errIdx])
	}
	errArg := "nil"
	if errIdx >= 0 {
		errArg = "&" + names[errIdx]
	}
	return fmt.Sprintf("%s.Exit%s(&__tg, %s, &%s)", alias, kind, errArg, names[0])
}

// doneCall returns the statement that ends a defer-free probe's call at a
// return of the function, with the values being returned: a test of the
// Call and the call of End: what monitor.Done… inlines to, written out, so
// that the compiler has no call to inline at every return (on a large
// package those inlined calls took a tenth of a plain compile's memory).
//
// Where the function declares one of the predeclared names that statement
// uses (len, int64, nil, true, false) the call of monitor.Done… it stands for
// is kept (universal is false).
func (pj *packageJob) doneCall(sig *types.Signature, names []string, universal bool) string {
	errIdx, kind := pj.resultKinds(sig)
	if !universal {
		return pj.inlinedDoneCall(errIdx, kind, names)
	}
	failed := "false"
	if errIdx >= 0 {
		failed = names[errIdx] + " != nil"
	}
	size := "0, false"
	switch kind {
	case "":
	case "Int":
		size = fmt.Sprintf("int64(%s), true", names[0])
	default:
		size = fmt.Sprintf("int64(len(%s)), true", names[0])
	}
	return fmt.Sprintf("if __tgc != nil { __tgc.End(%s, %s) }", failed, size)
}

// inlinedDoneCall is the call of monitor.Done… that ends a started call
// with the values being returned, for doneCall.
func (pj *packageJob) inlinedDoneCall(errIdx int, kind string, names []string) string {
	switch {
	case errIdx < 0 && kind == "":
		return alias + ".Done(__tgc)"
	case kind == "":
		return fmt.Sprintf("%s.DoneErr(__tgc, %s)", alias, names[errIdx])
	}
	errArg := "nil"
	if errIdx >= 0 {
		errArg = names[errIdx]
	}
	return fmt.Sprintf("%s.Done%s(__tgc, %s, %s)", alias, kind, errArg, names[0])
}

// universalAt reports whether the predeclared names doneCall writes mean
// the universe's at every return of fd and at its closing brace: neither
// the function nor its package declares one of them anew.
func (pj *packageJob) universalAt(fd *ast.FuncDecl, rets []*ast.ReturnStmt) bool {
	scope := pj.info.Scopes[fd.Type]
	if scope == nil {
		return false
	}
	positions := []token.Pos{fd.Body.Rbrace}
	for _, r := range rets {
		positions = append(positions, r.Pos())
	}
	for _, pos := range positions {
		inner := scope.Innermost(pos)
		if inner == nil {
			inner = scope
		}
		for _, name := range []string{"len", "int64", "nil", "true", "false"} {
			if _, obj := inner.LookupParent(name, pos); obj == nil || obj.Parent() != types.Universe {
				return false
			}
		}
	}
	return true
}

// resultKinds returns the index of the error result (-1 for none) and the
// size kind of the first result ("" for none).
func (pj *packageJob) resultKinds(sig *types.Signature) (errIdx int, kind string) {
	res := sig.Results()
	errIdx = -1
	if res.Len() == 0 {
		return errIdx, ""
	}
	if isError(res.At(res.Len() - 1).Type()) {
		errIdx = res.Len() - 1
	}
	if errIdx != 0 && generics(pj.job.Lang) {
		kind = sizeKind(res.At(0).Type())
	}
	return errIdx, kind
}

// sizeKind names the exit for a first result of type t with a cheap size
// (monitor.ExitString, ExitSlice, ExitMap, ExitChan, ExitInt), "" for none.
func sizeKind(t types.Type) string {
	if _, ok := t.(*types.TypeParam); ok {
		return ""
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return "String"
		case u.Info()&types.IsInteger != 0 && u.Kind() != types.UntypedInt:
			return "Int"
		}
	case *types.Slice:
		return "Slice"
	case *types.Map:
		return "Map"
	case *types.Chan:
		if u.Dir() != types.SendOnly {
			return "Chan"
		}
	}
	return ""
}

// generics reports whether a package compiled with -lang=lang may call a
// generic function with inferred types (go1.18 and later; no -lang: yes).
func generics(lang string) bool { return langAtLeast(lang, 18) }

// nameResults returns the result names, adding names where there are none (and
// replacing blank ones) with edits that stay on the same line.
func (pj *packageJob) nameResults(i int, results *ast.FieldList) []string {
	var names []string
	n := 0
	if results.Opening == token.NoPos {
		// Added before the name edits so "(" lands first at the same offset.
		pj.edits[i] = append(pj.edits[i],
			edit{off: pj.off(results.Pos()), text: "("},
			edit{off: pj.off(results.End()), text: ")"})
	}
	for _, field := range results.List {
		if len(field.Names) == 0 {
			name := fmt.Sprintf("__tgr%d", n)
			n++
			names = append(names, name)
			pj.edits[i] = append(pj.edits[i], edit{off: pj.off(field.Type.Pos()), text: name + " "})
			continue
		}
		for _, id := range field.Names {
			name := id.Name
			if name == "_" {
				name = fmt.Sprintf("__tgr%d", n)
				pj.edits[i] = append(pj.edits[i], edit{off: pj.off(id.Pos()), del: 1, text: name})
			}
			n++
			names = append(names, name)
		}
	}
	return names
}

// write writes the rewritten files and the probe table, and updates the job.
func (pj *packageJob) write() error {
	for i, edits := range pj.edits {
		if len(edits) == 0 {
			continue
		}
		edits = append(edits, pj.importEdit(i))
		src := applyEdits(pj.srcs[i], edits)
		out, err := writeRewritten(pj.job.WorkDir, pj.job.Files[i], src)
		if err != nil {
			return err
		}
		pj.job.Files[i] = out
	}
	if len(pj.probes) > 0 {
		table, err := pj.probeTable()
		if err != nil {
			return err
		}
		// First in argv, so its variable registers the probes before the package's
		// own init functions run.
		pj.job.Files = append([]string{table}, pj.job.Files...)
	}
	pj.job.AddedImports = append(pj.job.AddedImports, pj.s.LinkedPackages()...)
	return nil
}

// importEdit adds the monitor import on the package clause's line.
func (pj *packageJob) importEdit(i int) edit {
	f := pj.files[i]
	return edit{off: pj.off(f.Name.End()), text: fmt.Sprintf("; import %s %q", alias, monitorPath)}
}

func (s *Session) logf(format string, args ...any) {
	if s.opts.Verbose {
		fmt.Fprintf(os.Stderr, "tigris: "+format+"\n", args...)
	}
}
