package rewriter

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// The compile step: a package the config selects is parsed, type-checked and
// rewritten, and the compiler gets the new files and an importcfg that lists
// the runtime; every other package compiles unchanged.

// compile handles one compile invocation with an active session.
func (p *proxy) compile() error {
	ta, err := parseToolArgs(p.args, compileValueFlags, true)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	what := ta.value("p")
	if p.env.importPath != "" {
		what = p.env.importPath
	}
	workDir, err := p.compileWorkDir(ta, what)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", what, err)
	}
	// plain is the compile as the go command asked for it, without the
	// driver's DigestFlag (which only keys the go command's cache).
	plain, err := ta.commandLine(ta.rewrite(argEdit{drop: []string{DigestFlag}}), workDir)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", what, err)
	}
	files := ta.operandList()
	if len(files) == 0 {
		return p.exec(plain)
	}
	job := &CompileJob{
		ImportPath:         ta.value("p"),
		ToolexecImportPath: p.env.importPath,
		TestVariant:        testVariant(p.env.importPath, files),
		Files:              slices.Clone(files),
		Lang:               ta.value("lang"),
		Std:                ta.bool("std"),
		Complete:           ta.bool("complete"),
		WorkDir:            workDir,
	}
	var cfg *importConfig
	if name := ta.value("importcfg"); name != "" {
		if cfg, err = readImportConfig(name); err != nil {
			return fmt.Errorf("compiling %s: %w", what, err)
		}
		job.ImportCfg = cfg.resolved()
		job.ImportMap = maps.Clone(cfg.importMap)
	}
	if p.opts.Verbose {
		job.Log = func(format string, args ...any) { p.logf(format, args...) }
	}
	// The compile that tells which functions the compiler inlines compiles
	// a reduced copy of the package (inlpass.go). When it has nothing to
	// reduce, it is the plain compile and writes the real output: if no
	// probe is left, that is the result. Under profile-guided optimization
	// the compiler inlines large hot functions, so nothing is reduced.
	var plainDone bool
	job.ReduceInlining = ta.value("pgoprofile") == ""
	job.Inlinable = func(reduced []string) (Inlining, error) {
		if reduced != nil {
			p.logf("compile %s: running the compiler: inlining pass, on a reduced copy", what)
			inl, err := p.reducedInliningPass(ta, workDir, reduced)
			if err == nil {
				return inl, nil
			}
			p.logf("compile %s: the reduced inlining pass failed (%v); compiling the whole package", what, err)
		}
		p.logf("compile %s: running the compiler: inlining pass, on the whole package", what)
		inl, quiet, err := p.inliningPass(ta, workDir)
		plainDone = err == nil && quiet
		return inl, err
	}

	changed, err := p.session.Instrument(job)
	for _, n := range job.Notices {
		fmt.Fprintf(p.stdio.Stderr, "tigris: %s\n", n)
	}
	if err != nil {
		fmt.Fprintf(p.stdio.Stderr, "tigris: warning: instrumenting %s: %v; compiling it unchanged\n", what, err)
		return p.exec(plain)
	}
	if !changed {
		if p.opts.Keep != "" {
			os.Remove(job.WorkDir) // only if empty
		}
		if plainDone {
			return nil
		}
		return p.exec(plain)
	}
	if len(job.Files) == 0 {
		return fmt.Errorf("compiling %s: the instrumenter left no files to compile", what)
	}

	edit := argEdit{operands: job.Files, set: map[string]string{}, drop: []string{DigestFlag}}
	if !job.Complete && ta.bool("complete") {
		edit.drop = append(edit.drop, "complete")
	}
	var missing []string
	for _, imp := range job.AddedImports {
		if imp != "unsafe" && imp != "C" && (cfg == nil || !cfg.has(imp)) {
			missing = append(missing, imp)
		}
	}
	if len(missing) > 0 {
		if cfg == nil {
			return fmt.Errorf("compiling %s: instrumented code imports %s, but the compile has no -importcfg to add it to", what, strings.Join(missing, ", "))
		}
		if p.env.nested {
			// tigris's nested go list compiles only the monitor runtime and
			// its dependencies, and a dependency of the monitor cannot import
			// it (an import cycle): compile it as it is, as the parent does.
			p.logf("compile %s: not instrumented: the monitor runtime depends on it", what)
			return p.exec(plain)
		}
		pkgs, err := p.resolveForCompile(ta, missing)
		if err != nil {
			return fmt.Errorf("compiling %s: %w", what, err)
		}
		if why := monitorDependency(job, pkgs); why != "" {
			p.logf("compile %s: not instrumented: %s", what, why)
			return p.exec(plain)
		}
		for _, m := range missing {
			if _, ok := pkgs[m]; !ok {
				return fmt.Errorf("compiling %s: go list found no export data for %s", what, m)
			}
		}
		n := cfg.addAll(pkgs)
		newCfg := filepath.Join(job.WorkDir, "importcfg")
		if err := writeFileAtomic(newCfg, cfg.bytes()); err != nil {
			return fmt.Errorf("compiling %s: %w", what, err)
		}
		edit.set["importcfg"] = newCfg
		p.logf("compile %s: added %d packagefile lines for %s", what, n, strings.Join(missing, ", "))
	}
	argv, err := ta.commandLine(ta.rewrite(edit), job.WorkDir)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", what, err)
	}
	p.logf("compile %s: running the compiler: instrumented", what)
	return p.exec(argv)
}

// inliningPass compiles the package unchanged, into its real output, with
// -m=2, and returns what the compiler says of its functions (parseInlining).
// quiet reports that the compile printed nothing but its -m lines, so that
// its output can stand as the package's plain compile. A failing compile
// returns an error; the caller then compiles the package unchanged, and the
// compiler reports the user's error itself.
func (p *proxy) inliningPass(ta *toolArgs, workDir string) (inl Inlining, quiet bool, err error) {
	userDiag := false
	for _, f := range []string{"m", "json", "S", "d", "live"} {
		if _, ok := ta.flags[f]; ok {
			userDiag = true // the user's own diagnostics: the real compile prints them
		}
	}
	argv, err := ta.commandLine(ta.rewrite(argEdit{drop: []string{DigestFlag}, flags: []string{"-m=2"}}), workDir)
	if err != nil {
		return Inlining{}, false, err
	}
	out, err := p.spawnCapturing(argv)
	if err != nil {
		return Inlining{}, false, fmt.Errorf("the plain compile failed")
	}
	inl, other := parseInlining(out)
	return inl, !userDiag && !other, nil
}

// spawnCapturing runs argv with its stdout and stderr captured: the
// inlining pass's -m=2 lines are for the proxy, not the user.
func (p *proxy) spawnCapturing(argv []string) (string, error) {
	var out bytes.Buffer
	stdio := p.stdio
	p.stdio.Stderr = &out
	err := p.spawn(argv, nil, &out)
	p.stdio = stdio
	return out.String(), err
}

// reducedInliningPass compiles the reduced files of the inlining pass with
// -m=2 into a scratch output and returns what the compiler says of their
// functions.
func (p *proxy) reducedInliningPass(ta *toolArgs, workDir string, files []string) (Inlining, error) {
	dir := inliningDir(workDir)
	edit := argEdit{operands: files, drop: []string{DigestFlag}, flags: []string{"-m=2"}, set: map[string]string{"o": filepath.Join(dir, "_pkg_.a")}}
	for _, f := range []string{"asmhdr", "linkobj"} { // outputs
		if ta.value(f) != "" {
			edit.set[f] = filepath.Join(dir, f)
		}
	}
	argv, err := ta.commandLine(ta.rewrite(edit), workDir)
	if err != nil {
		return Inlining{}, err
	}
	out, stopped, err := compileUntilInlined(p.command(argv))
	defer os.RemoveAll(dir)
	if err != nil {
		return Inlining{}, fmt.Errorf("%v: %s", err, firstLines(out, 3))
	}
	if stopped {
		p.logf("compile %s: the inlining pass stopped where escape analysis began", ta.value("p"))
	}
	inl, _ := parseInlining(out)
	return inl, nil
}

// compileUntilInlined runs cmd, a compile with -m=2 whose output is
// scratch, and returns what it printed (stdout and stderr together) up to
// the end of its inlining. With -m the compiler prints each diagnostic as
// it makes it, and it analyses escapes only once it has inlined every call
// of the package (cmd/compile/internal/gc.Main); so the first line of
// escape analysis (escapeLine) says that every inlining line has been
// printed, and the compile is killed there, sparing its escape analysis
// and backend (which -m runs serially: three fifths of the reduced compile
// of a large server package). stopped reports that it was; a compile that
// never prints such a line runs to its end.
func compileUntilInlined(cmd *exec.Cmd) (out string, stopped bool, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", false, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return "", false, err
	}
	var b strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if escapeLine(line) {
			stopped = true
			cmd.Process.Kill()
			break
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	scanErr := sc.Err() // a line too long: what follows it is not read
	if scanErr != nil {
		cmd.Process.Kill()
	}
	io.Copy(io.Discard, r) // until the compiler's end closes the pipe
	r.Close()
	err = cmd.Wait()
	switch {
	case scanErr != nil:
		return b.String(), false, fmt.Errorf("reading the compiler's output: %w", scanErr)
	case stopped:
		err = nil
	}
	return b.String(), stopped, err
}

// escapeLine reports whether line is a diagnostic of the compiler's escape
// analysis (-m): "x escapes to heap", "x does not escape", "leaking param:
// x", "moved to heap: x", and -m=2's explanations ("  flow: ...").
// Inlining's own lines are never taken for one.
func escapeLine(line string) bool {
	if canInline.MatchString(line) || inliningCall.MatchString(line) || strings.Contains(line, ": cannot inline ") {
		return false
	}
	return escapeDiag.MatchString(line)
}

// escapeDiag matches the escape analysis's diagnostics.
var escapeDiag = regexp.MustCompile(`^.*:\d+:\d+: (.* escapes to heap|.* does not escape|leaking param( content)?: |moved to heap: |  +flow: )`)

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// Inlining is what the compiler says of a package's functions, by the
// "file:line" of their declarations (file being the base name; the compiler
// puts a method's position at its receiver, not its name).
type Inlining struct {
	// Inlined holds the functions whose bodies the compiler inlines.
	Inlined map[string]bool
	// Size holds, for the functions too complex to inline, the compiler's
	// size of the body (the cost it compares with its inlining budget).
	Size map[string]int
	// Calls holds the call sites the compiler inlines, by "file:line:col" of
	// their opening parenthesis.
	Calls map[string]bool
	// Lits holds the function literals the compiler inlines at a call, and
	// LitSize the size of each other one, by "file:line:col" of their func
	// keyword. A literal is judged by its calls, not by "can inline": the
	// compiler gives every literal a budget of 800 for that (a literal
	// called once is inlined up to that cost), so it says "can inline" of
	// nearly all, also of those it only ever calls through a func value.
	Lits    map[string]bool
	LitSize map[string]int
}

// inliningCall matches -m's line for an inlined call site:
// "path/file.go:12:9: inlining call to strings.ToUpper".
var inliningCall = regexp.MustCompile(`^(.*?):(\d+):(\d+): inlining call to (\S*)`)

// canInline matches the compiler's -m line for an inlinable function:
// "path/file.go:12:6: can inline (*T).Name with cost 7 as: ...".
var canInline = regexp.MustCompile(`^(.*?):(\d+):(\d+): can inline ([^ ]+)(?: with cost (\d+))?`)

// tooComplex matches -m=2's line for a function too complex to inline:
// "path/file.go:12:6: cannot inline F: function too complex: cost 91 exceeds budget 80".
var tooComplex = regexp.MustCompile(`^(.*?):(\d+):(\d+): cannot inline (.+?): function too complex: cost (\d+) exceeds budget \d+`)

// bodyInlines reports whether "can inline NAME" says that the body of the
// function declared at the line's position inlines. It does not for a function
// literal (NAME ends in .funcN), the compiler's wrapper of a deferred or go
// call (.deferwrapN, .gowrapN: on a function's first line, it would pass for
// the function), nor for an instantiation of a generic function
// with real type arguments (Max[int], (*Tree[string,int]).Put): that is the
// small wrapper that passes the dictionary to the shape function, which holds
// the body and is named with go.shape types (Max[go.shape.int]); a body too
// complex to inline gets no "can inline" line of its own, only its wrapper.
func bodyInlines(name string) bool {
	if strings.Contains(name, ".func") || strings.Contains(name, ".deferwrap") || strings.Contains(name, ".gowrap") {
		return false // a literal, or the wrapper of a deferred or go call
	}
	return !strings.Contains(name, "[") || strings.Contains(name, "go.shape.")
}

// isLiteralName reports the compiler's name of a function literal
// (F.func1, F.func1.2, F-range1.1) as -m prints it, not of the wrapper of a
// deferred or go call, nor of a range-over-func body (F-range1).
func isLiteralName(name string) bool {
	if strings.Contains(name, ".deferwrap") || strings.Contains(name, ".gowrap") {
		return false
	}
	if i := strings.LastIndex(name, "-range"); i >= 0 && strings.Trim(name[i+len("-range"):], "0123456789") == "" {
		return false
	}
	_, lit := pointcut.SplitLiteral(name)
	return lit != ""
}

// parseInlining reads -m=2 output: the functions whose bodies inline, the
// sizes of those too complex to, and whether out holds anything but -m
// diagnostics (a line not in the file:line:col form the compiler uses for
// them). Positions are keyed by the file's base name and the line.
func parseInlining(out string) (Inlining, bool) {
	return parseInliningFiles(out, filepath.Base)
}

// parseInliningFiles is parseInlining with the key of a file's name given
// by file.
func parseInliningFiles(out string, file func(string) string) (Inlining, bool) {
	inl := Inlining{Inlined: map[string]bool{}, Size: map[string]int{}, Calls: map[string]bool{}, Lits: map[string]bool{}, LitSize: map[string]int{}}
	other := false
	litAt := map[string]string{} // a literal's name as -m prints it → its position
	var litCalls []string        // the literals of inlined calls
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		if m := canInline.FindStringSubmatch(line); m != nil {
			switch {
			case bodyInlines(m[4]):
				inl.Inlined[file(m[1])+":"+m[2]] = true
			case isLiteralName(m[4]):
				key := file(m[1]) + ":" + m[2] + ":" + m[3]
				litAt[m[4]] = key
				if n, err := strconv.Atoi(m[5]); err == nil && n > inl.LitSize[key] {
					inl.LitSize[key] = n
				}
			}
			continue
		}
		if m := inliningCall.FindStringSubmatch(line); m != nil {
			inl.Calls[file(m[1])+":"+m[2]+":"+m[3]] = true
			if isLiteralName(m[4]) {
				litCalls = append(litCalls, m[4])
			}
			continue
		}
		if m := tooComplex.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[5])
			key, sizes := file(m[1])+":"+m[2], inl.Size
			switch {
			case isLiteralName(m[4]):
				key, sizes = key+":"+m[3], inl.LitSize
			case strings.Contains(m[4], ".func"):
				continue
			}
			// A generic function: its shapes' sizes, the largest.
			if n > sizes[key] {
				sizes[key] = n
			}
			continue
		}
		if !diagLine.MatchString(line) {
			other = true
		}
	}
	for _, name := range litCalls {
		if key, ok := litAt[name]; ok {
			inl.Lits[key] = true
		}
	}
	return inl, other
}

// diagLine is a compiler diagnostic with a position, or -m's "# package" header.
var diagLine = regexp.MustCompile(`^(# |.*:\d+:\d+: )`)

// resolveForCompile checks that the module graph's monitor runtime is the one
// this tigris generates code for, and resolves export data for the monitor
// packages and missing.
func (p *proxy) resolveForCompile(ta *toolArgs, missing []string) (map[string]string, error) {
	if err := checkMonitorVersion(p.invocation()); err != nil {
		return nil, err
	}
	pgo, err := p.invocation().pgoProfile(ta.value("pgoprofile"), p.env.importPath)
	if err != nil {
		return nil, err
	}
	r := p.resolver(workFromObjDir(ta.value("importcfg")), pgo)
	pkgs, err := r.resolve(append(slices.Clone(MonitorPackages), missing...))
	if err != nil {
		return nil, fmt.Errorf("resolving export data for %s: %w", strings.Join(missing, ", "), err)
	}
	return pkgs, nil
}

// monitorDependency says why a package the instrumenter rewrote must be
// compiled unchanged because of the monitor runtime's own dependencies (deps, the
// resolution of MonitorPackages), or "" when it can import the monitor.
//
// A package the monitor imports, directly or not (strings, sort, net/http,
// participle, ...), would import the monitor back: an import cycle. Every
// package of the test binary of such a package p (p's test variant, p_test, the
// test main, packages recompiled against p's test variant) is skipped too: the
// monitor archive was compiled against the plain p, so the linker would reject
// it next to the test variant ("fingerprint mismatch").
func monitorDependency(job *CompileJob, deps map[string]string) string {
	if _, ok := deps[job.ImportPath]; ok {
		return "the monitor runtime depends on it (a probe would be an import cycle)"
	}
	if tested, ok := strings.CutSuffix(job.TestVariant, ".test"); ok {
		if _, ok := deps[tested]; ok {
			return fmt.Sprintf("part of the test binary of %s, which the monitor runtime depends on", tested)
		}
	}
	return ""
}
