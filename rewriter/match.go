package rewriter

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/goflags"
	"github.com/tigrisgo/tigris/internal/sorted"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// Match is one function `tigris match` reports: what a build would instrument,
// decided by the same code the toolexec proxy runs. A function literal's
// Signature has Lit set and its Pos is the literal's func keyword.
type Match struct {
	Signature pointcut.Signature
	Pos       token.Position // the declaration's name, a literal's func keyword
	// Skipped says why a function the pointcuts match gets no probe anyway
	// (//go:nosplit, linkname, ...); "" when it is instrumented.
	Skipped string
	// By are the monitor.include entries (names or expressions, as written)
	// that select the function.
	By []string
	// Size is the compiler's size of the body when it is too complex to
	// inline (0 otherwise, or when the compiler was not asked).
	Size int

	// What markSkipped needs to judge the body.
	fd    *ast.FuncDecl
	info  *types.Info
	fset  *token.FileSet
	decls func(*types.Func) *ast.FuncDecl
}

// IsSmall reports whether a match's Skipped says it is too small to be worth
// a probe.
func IsSmall(skipped string) bool { return strings.HasPrefix(skipped, SmallReason) }

// PackageMatches counts one package's functions.
type PackageMatches struct {
	Path      string
	Functions int // declarations with a body, and function literals when a pointcut names them
	Matched   int // selected by the pointcuts, with a probe or not
	// Instrumented are the matched functions that get a probe: Matched less
	// those that cannot carry one and those the build leaves without one
	// (inlined, too small), as the compiler decides.
	Instrumented int
}

// MatchOptions select the packages ListMatches loads.
type MatchOptions struct {
	Dir        string   // where the go command runs; "" = current directory
	Patterns   []string // package patterns, e.g. "./..."
	BuildFlags []string // e.g. "-tags=integration"
	Tests      bool     // include _test.go files
	// Env is the go command's environment; nil means this process's.
	Env []string
	// Progress, when set, is called as each step of ListMatches begins, with
	// what the step does in words ("type-checking 2 packages …"), on the
	// calling goroutine.
	Progress func(step string)
}

// progress reports the start of a step.
func (o *MatchOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// MatchReport is ListMatches' result.
type MatchReport struct {
	Matches  []Match // sorted by file and line
	Packages int     // packages loaded
	Excluded map[string]string
	// Functions is how many function declarations with a body (and function
	// literals, when a pointcut names them) were considered.
	Functions int
	// PerPackage counts the functions of every package that may match, sorted
	// by path.
	PerPackage []PackageMatches
}

// ListMatches loads the packages and reports every function cfg instruments. Type
// errors in a package that may match are reported as an error naming the
// position, because the proxy would compile such a package unchanged.
//
// It lists the packages first (go list, no compiling), and type-checks only
// those the pointcuts may match: go list -export compiles what they import
// that the build cache lacks, which is the long part on a fresh cache, so
// the dependencies of the other packages (a database driver of a command)
// are left alone. Then markSkipped compiles the packages with matches.
func ListMatches(cfg *config.Config, opts MatchOptions) (*MatchReport, error) {
	s := &Session{cfg: cfg}
	if opts.Env == nil {
		opts.Env = processEnviron().list
	}
	lc := &packages.Config{
		Env:        opts.Env,
		Mode:       packages.NeedName | packages.NeedModule,
		Dir:        opts.Dir,
		BuildFlags: opts.BuildFlags,
		Tests:      opts.Tests,
	}
	opts.progress("listing the packages")
	listed, err := packages.Load(lc, opts.Patterns...)
	if err != nil {
		return nil, fmt.Errorf("loading packages: %w", err)
	}
	rep := &MatchReport{Excluded: map[string]string{}}
	monitorDeps := loadMonitorDeps(lc)
	var loadErrs []string
	errSeen := map[string]bool{} // the listing and the type-check report a package's errors twice
	addErrs := func(pkg *packages.Package) {
		for _, e := range pkg.Errors {
			if msg := e.Error(); !errSeen[msg] {
				errSeen[msg] = true
				loadErrs = append(loadErrs, msg)
			}
		}
	}
	mayMatch := map[string]bool{} // package path → the pointcuts may match it
	typed := map[string]bool{}    // the paths that load them again, with their test variants
	byPattern := true             // their paths are patterns that load them
	for _, pkg := range listed {
		addErrs(pkg)
		if len(pkg.Errors) > 0 {
			continue
		}
		if pkg.Name == "main" && strings.HasSuffix(pkg.PkgPath, ".test") {
			continue // go test's generated main (_testmain.go), which the proxy leaves alone
		}
		rep.Packages++
		if mayMatch[pkg.PkgPath] || rep.Excluded[pkg.PkgPath] != "" {
			continue // a test variant of one seen
		}
		std := pkg.Module == nil && pkg.Name != "main"
		if why := s.packageExcluded(pkg.PkgPath, std); why != "" {
			rep.Excluded[pkg.PkgPath] = why
			continue
		}
		if monitorDeps[pkg.PkgPath] && cfg.Instrument != nil && cfg.Instrument.MayMatchPackageOf(pkg.PkgPath, pkg.Name == "main") {
			rep.Excluded[pkg.PkgPath] = "the monitor runtime imports it (a probe would be an import cycle)"
			continue
		}
		if cfg.Instrument == nil || !cfg.Instrument.MayMatchPackageOf(pkg.PkgPath, pkg.Name == "main") {
			continue
		}
		mayMatch[pkg.PkgPath] = true
		typed[loadPath(pkg)] = true
		byPattern = byPattern && pkg.PkgPath != "command-line-arguments"
	}
	patterns := sorted.Keys(typed)
	if !byPattern {
		patterns = opts.Patterns // files named on the command line: list them so again
	}
	var pkgs []*packages.Package
	if len(mayMatch) > 0 {
		opts.progress("type-checking the %d package(s) the pointcuts may match (go list -export compiles what they import that the build cache lacks)", len(mayMatch))
		tc := *lc
		tc.Mode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedModule
		if pkgs, err = packages.Load(&tc, patterns...); err != nil {
			return nil, fmt.Errorf("loading packages: %w", err)
		}
	}
	seen := map[string]bool{} // a package and its test variant share files
	byPath := map[string]*PackageMatches{}
	// Each include entry on its own, to say which one selects a function.
	includes := make([]*pointcut.Pointcut, len(cfg.Include))
	for i, e := range cfg.Include {
		includes[i], _ = cfg.Env.Parse(e) // parsed before, in config.Load
	}
	for _, pkg := range pkgs {
		if !mayMatch[pkg.PkgPath] {
			continue // go test's main, or a package named by a file pattern that may not match
		}
		addErrs(pkg)
		if len(pkg.Errors) > 0 || pkg.Types == nil {
			continue
		}
		counts := byPath[pkg.PkgPath]
		if counts == nil {
			counts = &PackageMatches{Path: pkg.PkgPath}
			byPath[pkg.PkgPath] = counts
		}
		decls := funcDecls(pkg.Syntax, pkg.TypesInfo)
		for _, f := range pkg.Syntax {
			linknamed := linknamedFuncs(f)
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				pos := pkg.Fset.Position(fd.Name.Pos())
				key := fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
				if seen[key] {
					continue
				}
				seen[key] = true
				fn, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func)
				if !ok || fd.Body == nil {
					continue
				}
				rep.Functions++
				counts.Functions++
				sig := SignatureOf(pkg.PkgPath, fn, pkg.PkgPath+"/"+filepath.Base(pos.Filename), pos.Line)
				if !cfg.Instrument.MatchExecution(&sig) {
					continue
				}
				counts.Matched++
				var by []string
				for i, pc := range includes {
					if pc != nil && pc.MatchExecution(&sig) {
						by = append(by, cfg.Include[i])
					}
				}
				rep.Matches = append(rep.Matches, Match{Signature: sig, Pos: pos, Skipped: notInstrumentable(fd, linknamed), By: by,
					fd: fd, info: pkg.TypesInfo, fset: pkg.Fset, decls: decls})
			}
		}
		if cfg.Instrument.HasLiteral() {
			rep.Matches = append(rep.Matches, literalMatches(pkg, cfg, includes, seen, &rep.Functions, counts, decls)...)
		}
	}
	if cfg.Inlinable != config.InlinableProbe || cfg.Small != config.SmallProbe {
		if err := markSkipped(rep, cfg, opts); err != nil {
			return rep, err
		}
	}
	for _, m := range rep.Matches {
		if m.Skipped == "" {
			byPath[m.Signature.Package].Instrumented++
		}
	}
	for _, c := range byPath {
		rep.PerPackage = append(rep.PerPackage, *c)
	}
	sort.Slice(rep.PerPackage, func(i, j int) bool { return rep.PerPackage[i].Path < rep.PerPackage[j].Path })
	sort.Slice(rep.Matches, func(i, j int) bool {
		a, b := rep.Matches[i].Pos, rep.Matches[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if len(loadErrs) > 0 {
		return rep, fmt.Errorf("%d package error(s); tigris compiles such packages unchanged:\n%s",
			len(loadErrs), joinLines(loadErrs))
	}
	return rep, nil
}

// literalMatches lists the function literals of pkg that cfg selects, as the
// proxy's literalCandidates finds them, each at its func keyword with its Go
// name; seen and counts are ListMatches'.
func literalMatches(pkg *packages.Package, cfg *config.Config, includes []*pointcut.Pointcut, seen map[string]bool, functions *int, counts *PackageMatches, decls func(*types.Func) *ast.FuncDecl) []Match {
	var out []Match
	names := literalNames(pkg.Syntax, pkg.TypesInfo, toolchainRangeScopes)
	encl := map[*ast.FuncDecl]pointcut.Signature{}
	for _, f := range pkg.Syntax {
		linknamed := linknamedFuncs(f)
		skip := map[*ast.FuncDecl]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.FuncDecl); ok {
				if fd.Recv != nil || fd.Name.Name != "init" {
					skip[fd] = notInstrumentable(fd, linknamed)
				}
				return fd.Body != nil
			}
			fl, ok := n.(*ast.FuncLit)
			if !ok {
				return true
			}
			name, named := names[fl]
			sigT, isSig := pkg.TypesInfo.TypeOf(fl).(*types.Signature)
			pos := pkg.Fset.Position(fl.Pos())
			key := fmt.Sprintf("%s:%d:%d", pos.Filename, pos.Line, pos.Column)
			if !named || !isSig || seen[key] {
				return true
			}
			seen[key] = true
			counts.Functions++
			*functions++
			file := pkg.PkgPath + "/" + filepath.Base(pos.Filename)
			host, fnName, why := pointcut.Signature{}, "init", ""
			if d := name.decl; d != nil {
				fnName, why = d.Name.Name, skip[d]
				if d.Recv == nil && fnName == "init" {
					fnName = name.outer
				}
				if _, ok := encl[d]; !ok {
					if fn, ok := pkg.TypesInfo.Defs[d.Name].(*types.Func); ok {
						encl[d] = SignatureOf(pkg.PkgPath, fn, file, 0)
					}
				}
				host = encl[d]
			}
			sig := LiteralSignatureOf(pkg.PkgPath, pkg.Name, host, fnName, name.lit, sigT, file, pos.Line)
			if !cfg.Instrument.MatchExecution(&sig) {
				return true
			}
			counts.Matched++
			var by []string
			for i, pc := range includes {
				if pc != nil && pc.MatchExecution(&sig) {
					by = append(by, cfg.Include[i])
				}
			}
			if why != "" {
				why = "written in a function that gets no probe: " + why
			}
			fd := &ast.FuncDecl{Name: &ast.Ident{NamePos: fl.Pos(), Name: "func"}, Type: fl.Type, Body: fl.Body}
			out = append(out, Match{Signature: sig, Pos: pos, Skipped: why, By: by, fd: fd, info: pkg.TypesInfo, fset: pkg.Fset, decls: decls})
			return true
		})
	}
	return out
}

// loadPath is the path that loads pkg again: its own, or for a test variant
// ("p [p.test]", "p_test [p.test]") that of the package tested.
func loadPath(pkg *packages.Package) string {
	if _, forTest, ok := strings.Cut(pkg.ID, " ["); ok {
		return strings.TrimSuffix(strings.TrimSuffix(forTest, "]"), ".test")
	}
	return pkg.PkgPath
}

// InlinedReason is why `tigris match` shows a matched function without a
// probe when the compiler inlines it.
const InlinedReason = "the compiler inlines it; a probe would change inlining and escapes (monitor.inlinable: probe instruments it anyway)"

// markSkipped marks the matches the compiler inlines in a plain build and
// those too small to be worth a probe, which the build leaves without one
// (monitor.inlinable and monitor.small): it compiles the packages with
// matches with -m=2 (cached compiles replay their output) and reads what the
// compiler says, as the proxy does.
//
// go build of several packages writes nothing, and neither does one of a
// single package that is no command; a single command is written into a
// temporary directory. (go build -o DIR would build only the commands among
// the packages.) With opts.Tests, go test -c -o DIR compiles the test variants
// too, in batches whose packages differ in their last path element, the name
// of their test binary.
func markSkipped(rep *MatchReport, cfg *config.Config, opts MatchOptions) error {
	pkgs := map[string]bool{} // package → it is a command
	for _, m := range rep.Matches {
		if m.Skipped == "" {
			pkgs[m.Signature.Package] = pkgs[m.Signature.Package] || m.Signature.Flags&pointcut.Main != 0
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	opts.progress("compiling the %d package(s) with matches, for the functions the compiler inlines (go build -gcflags=-m=2, writing nothing)", len(pkgs))
	tmp, err := os.MkdirTemp("", "tigris-match-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	list := sorted.Keys(pkgs)
	var out []byte
	run := func(args, list []string) error {
		args = append(args, opts.BuildFlags...)
		for _, p := range list {
			args = append(args, "-gcflags="+p+"=-m=2")
		}
		args = append(args, list...)
		cmd := exec.Command("go", args...)
		cmd.Dir = opts.Dir
		cmd.Env = append(opts.Env[:len(opts.Env):len(opts.Env)], "GOFLAGS="+goflags.WithoutToolexec(environOf(opts.Env).goFlags))
		o, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("finding the functions the compiler inlines (go %s): %v\n%s", strings.Join(args, " "), err, o)
		}
		out = append(out, o...)
		return nil
	}
	build := []string{"build"}
	if len(list) == 1 && pkgs[list[0]] {
		build = append(build, "-o", filepath.Join(tmp, "cmd"))
	}
	if err := run(build, list); err != nil {
		return err
	}
	if opts.Tests {
		for _, batch := range byTestBinary(list) {
			if err := run([]string{"test", "-c", "-o", tmp + string(filepath.Separator)}, batch); err != nil {
				return err
			}
		}
	}
	dir := opts.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	inl, _ := parseInliningFiles(string(out), matchFiles(rep, dir))
	for i := range rep.Matches {
		m := &rep.Matches[i]
		key := fmt.Sprintf("%s:%d", m.Pos.Filename, m.Pos.Line)
		inlined, sizes := inl.Inlined, inl.Size
		if m.Signature.Lit != "" { // known by their column too (literalCandidates)
			key += fmt.Sprintf(":%d", m.Pos.Column)
			inlined, sizes = inl.Lits, inl.LitSize
		}
		m.Size = sizes[key]
		switch {
		case m.Skipped != "":
		case cfg.Inlinable != config.InlinableProbe && inlined[key]:
			m.Skipped = InlinedReason
		case cfg.Small != config.SmallProbe && m.fd != nil && smallBody(m.fd, m.Size, m.info, m.fset, func(p token.Position) bool {
			return inl.Calls[fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)]
		}, m.decls):
			m.Skipped = smallReason(m.Size)
		}
	}
	return nil
}

// matchFiles resolves a file name the go command printed to the name of
// the file of rep's matches it means. The go command replays a cached
// compile's output as it printed it, names relative to the folder of the go
// command that compiled it, which may be another than dir (a workspace's
// folder, a parent module's): a name that is no file of a match relative to
// dir is the file of a match that ends with it.
func matchFiles(rep *MatchReport, dir string) func(string) string {
	known := map[string]bool{}
	for _, m := range rep.Matches {
		known[m.Pos.Filename] = true
	}
	resolved := map[string]string{} // a name is printed once a diagnostic
	return func(file string) string {
		if filepath.IsAbs(file) {
			return file
		}
		if r, ok := resolved[file]; ok {
			return r
		}
		r := filepath.Join(dir, file)
		if !known[r] {
			suffix := string(filepath.Separator) + filepath.Clean(filepath.FromSlash(file))
			for k := range known {
				if strings.HasSuffix(k, suffix) && (r == filepath.Join(dir, file) || k < r) {
					r = k // the first by name, whatever the map's order
				}
			}
		}
		resolved[file] = r
		return r
	}
}

// byTestBinary splits packages into batches in which no two share a last path
// element: go test -c -o DIR names each test binary after it.
func byTestBinary(pkgs []string) [][]string {
	var batches [][]string
	var names []map[string]bool
	for _, p := range pkgs {
		name := p[strings.LastIndex(p, "/")+1:]
		i := 0
		for i < len(batches) && names[i][name] {
			i++
		}
		if i == len(batches) {
			batches, names = append(batches, nil), append(names, map[string]bool{})
		}
		batches[i], names[i][name] = append(batches[i], p), true
	}
	return batches
}

// loadMonitorDeps returns the packages the monitor runtime depends on in the
// build context of lc (the proxy compiles them unchanged), or nil when the
// module graph has no tigris.
func loadMonitorDeps(lc *packages.Config) map[string]bool {
	dc := *lc
	dc.Mode, dc.Tests = packages.NeedName|packages.NeedImports|packages.NeedDeps, false
	roots, err := packages.Load(&dc, MonitorPackages...)
	if err != nil {
		return nil
	}
	deps := map[string]bool{}
	packages.Visit(roots, nil, func(p *packages.Package) {
		if len(p.Errors) == 0 {
			deps[p.PkgPath] = true
		}
	})
	return deps
}

func joinLines(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "\n"
		}
		out += "\t" + s
	}
	return out
}
