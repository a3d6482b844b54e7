package rewriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The toolexec proxy.
//
// `go build -toolexec="tigris toolexec"` makes the go command run
// `tigris toolexec /path/to/TOOL ARGS...` for every tool invocation. RunTool is
// that invocation's body:
//
//   - Tools other than compile and link (asm, cgo, vet, pack, buildid, cover, ...)
//     run untouched: same argv, stdin, stdout, stderr and environment, and the
//     same exit status. No config is loaded for them.
//   - `compile -V=full` and `link -V=full` print the real line, plus the tigris
//     fingerprint when the session is active (see fingerprint.go).
//   - compile: the argv is parsed into a CompileJob and handed to
//     Session.Instrument; when it rewrites the package the compiler gets the new
//     file list, loses -complete if the job says so, and gets an importcfg
//     extended with export data for the imports the instrumenter added.
//   - link: when an archive of the binary imports a package the link's importcfg
//     does not list (the monitor runtime that instrumented packages import), the
//     missing packagefile lines are added to a copy of the importcfg.
//
// On Unix the final tool replaces the proxy process (execve), so signals and the
// exit status are the tool's own and an unmatched package costs one process
// start; elsewhere, or when Stdio is not the process's own, the tool runs as a
// child and its exit status is returned as a *ToolExitError.

// Stdio are the streams a tool runs with.
type Stdio struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// OSStdio is the process's own standard streams.
func OSStdio() Stdio { return Stdio{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

// ToolExitError reports that the tool ran and exited with a non-zero status. The
// tool has printed its own diagnostics; the caller should exit with Code and
// print nothing more.
type ToolExitError struct {
	Tool string // the tool's name ("compile")
	Code int    // exit status; 128+n when the tool died of signal n
}

func (e *ToolExitError) Error() string {
	return fmt.Sprintf("%s exited with status %d", e.Tool, e.Code)
}

// RunTool runs one tool invocation for `tigris toolexec`: toolArgs[0] is the
// real tool's path, the rest its arguments, exactly as the go command passed
// them. opts.Dir defaults to the go command's working directory. The session is
// created (and the config loaded) only for compile and link.
//
// The returned error is a *ToolExitError when the tool itself failed, and
// otherwise an error of the proxy (with context, meant to be printed with a
// "tigris: " prefix). On Unix with OSStdio a successful call does not return:
// the tool replaces the process.
func RunTool(opts SessionOptions, toolArgs []string, stdio Stdio) error {
	if len(toolArgs) == 0 {
		return errors.New("no tool to run: usage: tigris toolexec TOOL [ARGS...]")
	}
	p := &proxy{
		opts:  opts,
		stdio: stdio,
		tool:  toolArgs[0],
		name:  ToolName(toolArgs[0]),
		args:  toolArgs[1:],
		env:   os.Environ(),
	}
	if p.name != "compile" && p.name != "link" {
		return p.exec(p.args)
	}
	if opts.Plan != "" {
		return p.planned()
	}
	if p.opts.Dir == "" {
		p.opts.Dir = goCommandDir()
	}
	if len(p.args) == 1 && p.args[0] == "-V=full" {
		return p.version()
	}
	s, err := NewSession(p.opts)
	if err != nil {
		return fmt.Errorf("loading the tigris config: %w", err)
	}
	if !s.Active() {
		return p.exec(p.args)
	}
	p.session = s
	if err := checkToolchain(p.tool); err != nil {
		return err
	}
	if p.name == "compile" {
		return p.compile()
	}
	return p.link()
}

// planned runs a compile or link of a build `tigris go` planned (Plan): the
// compiler's identity is its own, a compile without DigestFlag is a plain
// compile, and the config is loaded only for the compiles and links that
// need it.
func (p *proxy) planned() error {
	plan, err := ReadPlan(p.opts.Plan)
	if err != nil {
		return err
	}
	p.plan = plan
	if len(p.args) == 1 && p.args[0] == "-V=full" {
		if p.name == "compile" {
			return p.exec(p.args)
		}
		return p.versionWith(plan.LinkID)
	}
	if p.name == "compile" && !hasFlag(p.args, DigestFlag) {
		return p.exec(p.args)
	}
	if digest, err := FileDigest(plan.Config); err != nil || digest != plan.ConfigDigest {
		return fmt.Errorf("%s changed during the build (or cannot be read: %v); run the build again", plan.Config, err)
	}
	p.opts.ConfigPath, p.opts.Dir = plan.Config, plan.Dir
	s, err := NewSession(p.opts)
	if err != nil {
		return fmt.Errorf("loading the tigris config: %w", err)
	}
	p.session = s
	if err := checkToolchain(p.tool); err != nil {
		return err
	}
	if p.name == "compile" {
		return p.compile()
	}
	return p.link()
}

// hasFlag reports whether args, response files expanded, hold -name=value.
func hasFlag(args []string, name string) bool {
	expanded, _, err := expandResponseFiles(args, 0)
	if err != nil {
		return true // let compile() report the response file
	}
	for _, a := range expanded {
		if strings.HasPrefix(a, "-"+name+"=") {
			return true
		}
	}
	return false
}

// ToolName is the name of the tool at path: its base name without ".exe".
func ToolName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".exe")
}

// proxy is one tool invocation.
type proxy struct {
	opts    SessionOptions
	stdio   Stdio
	tool    string   // path of the real tool
	name    string   // "compile", "link", ...
	args    []string // as the go command passed them
	env     []string
	session *Session // nil until loaded
	plan    *Plan    // the build plan of tigris go, nil without one

	invOnce sync.Once
	inv     *goInvocation

	fpOnce sync.Once
	fp     string
	fpErr  error
}

func (p *proxy) logf(format string, args ...any) {
	if p.opts.Verbose {
		fmt.Fprintf(p.stdio.Stderr, "tigris: "+format+"\n", args...)
	}
}

// invocation describes the go command running this tool (computed once).
func (p *proxy) invocation() *goInvocation {
	p.invOnce.Do(func() {
		if p.plan != nil {
			p.inv = invocationOf(p.plan)
			return
		}
		p.inv = findGoInvocation(p.tool)
	})
	return p.inv
}

// fingerprint is the hex tigris fingerprint of this build's compiler output
// (computed once): compile's -V=full suffix and the resolver's cache key.
func (p *proxy) fingerprint() (string, error) {
	p.fpOnce.Do(func() {
		if p.plan != nil {
			p.fp = p.plan.LinkID
			return
		}
		p.fp, p.fpErr = computeFingerprint(p.session.BuildHash(), p.invocation(), p.env)
	})
	return p.fp, p.fpErr
}

// version answers `TOOL -V=full`.
func (p *proxy) version() error {
	s, err := NewSession(p.opts)
	if err != nil {
		return fmt.Errorf("loading the tigris config: %w", err)
	}
	if !s.Active() {
		return p.exec(p.args)
	}
	p.session = s
	// The linker's identity covers the whole config: it embeds the run-time
	// settings (Session.LinkFlags), which the compiler never sees.
	fp, err := p.fingerprint()
	if p.name == "link" {
		fp, err = computeFingerprint(s.ConfigHash(), p.invocation(), p.env)
	}
	if err != nil {
		return fmt.Errorf("%s -V=full: %w", p.name, err)
	}
	return p.versionWith(fp)
}

// versionWith answers -V=full with the tool's line and fp appended.
func (p *proxy) versionWith(fp string) error {
	var out bytes.Buffer
	if err := p.spawn(p.args, p.stdio.Stdin, &out); err != nil {
		p.stdio.Stdout.Write(out.Bytes())
		return err
	}
	line, err := suffixVersionLine(out.String(), fp)
	if err != nil {
		return fmt.Errorf("%s -V=full: %w", p.name, err)
	}
	_, err = io.WriteString(p.stdio.Stdout, line)
	return err
}

// compile handles one compile invocation with an active session.
func (p *proxy) compile() error {
	ta, err := parseToolArgs(p.args, compileValueFlags, true)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	what := ta.value("p")
	if tip := os.Getenv("TOOLEXEC_IMPORTPATH"); tip != "" {
		what = tip
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
		ImportPath:  ta.value("p"),
		TestVariant: testVariant(os.Getenv("TOOLEXEC_IMPORTPATH"), files),
		Files:       slices.Clone(files),
		Lang:        ta.value("lang"),
		Std:         ta.bool("std"),
		Complete:    ta.bool("complete"),
		WorkDir:     workDir,
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
	// The plain compile that tells which functions the compiler inlines
	// writes the real output: when no probe is left, it is the result.
	var plainDone bool
	job.Inlinable = func() (map[string]bool, error) {
		inl, quiet, err := p.inliningPass(ta, workDir)
		plainDone = err == nil && quiet
		return inl, err
	}

	changed, err := p.session.Instrument(job)
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
		if os.Getenv(nestedEnv) != "" {
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
	return p.exec(argv)
}

// inliningPass compiles the package unchanged, into its real output, with -m,
// and returns the functions the compiler says it can inline, by the
// "file:line" of their declarations (file being the base name; the compiler
// puts a method's position at its receiver, not its name). quiet reports
// that the compile printed nothing but its -m lines, so that its output can
// stand as the package's plain compile. A failing compile returns an error;
// the caller then compiles the package unchanged, and the compiler reports the
// user's error itself.
func (p *proxy) inliningPass(ta *toolArgs, workDir string) (inl map[string]bool, quiet bool, err error) {
	userDiag := false
	for _, f := range []string{"m", "json", "S", "d", "live"} {
		if _, ok := ta.flags[f]; ok {
			userDiag = true // the user's own diagnostics: the real compile prints them
		}
	}
	argv, err := ta.commandLine(ta.rewrite(argEdit{drop: []string{DigestFlag}, flags: []string{"-m"}}), workDir)
	if err != nil {
		return nil, false, err
	}
	var out bytes.Buffer
	stdio := p.stdio
	p.stdio.Stderr = &out
	err = p.spawn(argv, nil, &out)
	p.stdio = stdio
	if err != nil {
		return nil, false, fmt.Errorf("the plain compile failed")
	}
	inl, other := parseCanInline(out.String())
	return inl, !userDiag && !other, nil
}

// canInline matches the compiler's -m line for an inlinable function:
// "path/file.go:12:6: can inline (*T).Name with cost 7 as: ...".
var canInline = regexp.MustCompile(`^(.*?):(\d+):(\d+): can inline ([^ ]+)`)

// parseCanInline returns the positions of the "can inline" lines and whether
// out holds anything but -m diagnostics (a line not in the file:line:col form
// the compiler uses for them).
func parseCanInline(out string) (map[string]bool, bool) {
	inl := map[string]bool{}
	other := false
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		if m := canInline.FindStringSubmatch(line); m != nil {
			if !strings.Contains(m[4], ".func") { // function literals
				inl[filepath.Base(m[1])+":"+m[2]] = true
			}
			continue
		}
		if !diagLine.MatchString(line) {
			other = true
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
	if err := checkMonitorVersion(p.invocation(), p.env); err != nil {
		return nil, err
	}
	pgo, err := p.invocation().pgoProfile(ta.value("pgoprofile"), os.Getenv("TOOLEXEC_IMPORTPATH"))
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

// compileWorkDir creates the job's private directory: $WORK/bNNN/tigris (next
// to the compile's output) or, with Keep, Keep/<package> emptied first.
func (p *proxy) compileWorkDir(ta *toolArgs, what string) (string, error) {
	var dir string
	switch {
	case p.opts.Keep != "":
		name := strings.NewReplacer(" [", "@", "]", "", " ", "_").Replace(what)
		return keepDir(filepath.Join(p.opts.Keep, filepath.FromSlash(name)))
	case ta.value("o") != "":
		dir = filepath.Join(filepath.Dir(ta.value("o")), "tigris")
	default:
		return os.MkdirTemp("", "tigris-compile-")
	}
	return dir, os.MkdirAll(dir, 0o777)
}

// keptMarker is the file that marks a --keep directory as tigris's own.
const keptMarker = ".tigris-kept"

// keepDir prepares dir for a package's kept sources: a new directory, or one
// an earlier build kept, whose files are removed (subdirectories hold other
// packages and stay). A directory without tigris's marker is refused and left
// untouched: --keep may have been pointed at a source tree, and DIR/<import
// path> is then the user's own package.
func keepDir(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == keptMarker }):
		if len(entries) > 0 {
			return "", fmt.Errorf("--keep: %s exists and was not made by tigris; keep rewritten sources in a directory of their own", dir)
		}
	default:
		for _, e := range entries {
			if e.Type().IsRegular() && e.Name() != keptMarker {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					return "", err
				}
			}
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, keptMarker), []byte("rewritten sources kept by tigris (--keep, TIGRIS_KEEP)\n"), 0o666)
}

// link handles one link invocation with an active session.
func (p *proxy) link() error {
	ta, err := parseToolArgs(p.args, linkValueFlags, false)
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	name := ta.value("importcfg")
	if name == "" {
		return p.exec(p.args)
	}
	what := os.Getenv("TOOLEXEC_IMPORTPATH")
	if what == "" {
		what = ta.value("o")
	}
	cfg, err := readImportConfig(name)
	if err != nil {
		return fmt.Errorf("linking %s: %w", what, err)
	}
	settings := argEdit{flags: p.session.LinkFlags()}
	if !slices.ContainsFunc(MonitorPackages, func(m string) bool { return !cfg.has(m) }) {
		// The binary links the monitor already (it imports it), and with it
		// everything instrumented code imports.
		settings.flags = append(settings.flags, checkLinknameOff)
		return p.execEdited(ta, settings, filepath.Join(filepath.Dir(name), "tigris"))
	}
	start := time.Now()
	missing, err := missingImports(cfg, ta.operandList())
	if err != nil {
		return fmt.Errorf("linking %s: %w", what, err)
	}
	p.logf("link %s: read the imports of %d archives in %v; missing: %v", what, len(cfg.packageFile), time.Since(start).Round(time.Microsecond), missing)
	if len(missing) == 0 {
		return p.exec(p.args) // nothing instrumented: a plain link
	}
	r := p.resolver(workFromObjDir(name), modinfoPGO(cfg.orig))
	pkgs, err := r.resolve(append(slices.Clone(MonitorPackages), missing...))
	if err != nil {
		return fmt.Errorf("linking %s: resolving export data for %s: %w", what, strings.Join(missing, ", "), err)
	}
	if tested, ok := strings.CutSuffix(what, ".test"); ok {
		if _, dep := pkgs[tested]; dep {
			return fmt.Errorf("linking %s: the monitor runtime imports %s, so a test binary of %s cannot link the monitor, but instrumented packages in it do (%s): exclude them from the tigris config to test %s",
				what, tested, tested, strings.Join(monitorImporters(cfg), ", "), tested)
		}
	}
	n := cfg.addAll(pkgs)
	newCfg := filepath.Join(filepath.Dir(name), "tigris", filepath.Base(name))
	if err := writeFileAtomic(newCfg, cfg.bytes()); err != nil {
		return fmt.Errorf("linking %s: %w", what, err)
	}
	p.logf("link %s: added %d packagefile lines for %s", what, n, strings.Join(missing, ", "))
	settings.set = map[string]string{"importcfg": newCfg}
	if cfg.has(atexitPath) {
		settings.flags = append(settings.flags, checkLinknameOff)
	}
	if err := p.execEdited(ta, settings, filepath.Dir(newCfg)); err != nil {
		return fmt.Errorf("linking %s: %w", what, err)
	}
	return nil
}

// checkLinknameOff lets the linker resolve the go:linkname reference of
// package atexit to the runtime's exit hooks (internal/runtime/exithook.Add),
// which it refuses by default. It is given only to links that contain that
// package, that is links of instrumented binaries, and it only relaxes a check:
// a program that links plain links the same way with it.
const checkLinknameOff = "-checklinkname=0"

// execEdited runs the tool with its argv edited; dir receives a new response
// file when the go command used one.
func (p *proxy) execEdited(ta *toolArgs, e argEdit, dir string) error {
	argv, err := ta.commandLine(ta.rewrite(e), dir)
	if err != nil {
		return err
	}
	return p.exec(argv)
}

// monitorImporters returns the packages of a link whose archives import the
// monitor, sorted, for messages.
func monitorImporters(cfg *importConfig) []string {
	var out []string
	for path, file := range cfg.packageFile {
		if imps, err := archiveImports(file); err == nil && slices.Contains(imps, monitorPath) {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out
}

// missingImports returns the packages imported by the archives of a link (every
// packagefile of its importcfg, and the archives on its command line) that the
// importcfg does not list. Archives in a layout archiveImports does not know are
// searched for the MonitorPackages paths instead.
func missingImports(cfg *importConfig, operands []string) ([]string, error) {
	files := make([]string, 0, len(cfg.packageFile)+len(operands))
	for _, f := range cfg.packageFile {
		files = append(files, f)
	}
	for _, o := range operands {
		if strings.HasSuffix(o, ".a") || strings.HasSuffix(o, ".o") {
			files = append(files, o)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)

	type result struct {
		imports []string
		err     error
	}
	results := make([]result, len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(8, len(files)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				imps, err := archiveImports(files[i])
				if errors.Is(err, errObjectFormat) {
					imps, err = nil, nil
					for _, m := range MonitorPackages {
						found, ferr := fileMentions(files[i], []string{m})
						if ferr != nil {
							err = ferr
							break
						}
						if found {
							imps = append(imps, m)
						}
					}
				}
				results[i] = result{imps, err}
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()

	var missing []string
	for i, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("reading %s: %w", files[i], r.err)
		}
		for _, imp := range r.imports {
			if imp != "unsafe" && !cfg.has(imp) {
				missing = append(missing, imp)
			}
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing), nil
}

// modinfoPGO returns the -pgo profile recorded in the build information the go
// command passes to the linker ("modinfo" line of importcfg.link), "" for none.
func modinfoPGO(importcfg []byte) string {
	for _, line := range strings.Split(string(importcfg), "\n") {
		v, ok := strings.CutPrefix(line, "modinfo ")
		if !ok {
			continue
		}
		if s, err := strconv.Unquote(strings.TrimSpace(v)); err == nil {
			v = s
		}
		for _, l := range strings.Split(v, "\n") {
			if pgo, ok := strings.CutPrefix(l, "build\t-pgo="); ok {
				return pgo
			}
		}
	}
	return ""
}

// resolver returns a resolver for this invocation.
func (p *proxy) resolver(work, pgo string) *resolver {
	return &resolver{
		inv:         p.invocation(),
		env:         p.env,
		workDir:     work,
		pgo:         pgo,
		fingerprint: p.fingerprint,
		logf:        p.logf,
	}
}

var objDirPattern = regexp.MustCompile(`^b[0-9]+$`)

// workFromObjDir returns the build's $WORK from a file in one of its object
// directories ($WORK/b012/importcfg), or "" when the path does not look like one.
func workFromObjDir(file string) string {
	if file == "" {
		return ""
	}
	obj := filepath.Dir(file)
	if !objDirPattern.MatchString(filepath.Base(obj)) {
		return ""
	}
	return filepath.Dir(obj)
}

// goCommandDir returns the go command's working directory: the parent
// process's on Linux (a c-shared or plugin link runs in its output directory),
// else this process's own (where the go command runs compile and link).
func goCommandDir() string {
	if runtime.GOOS == "linux" {
		if d, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", os.Getppid())); err == nil {
			return d
		}
	}
	d, _ := os.Getwd()
	return d
}

// exec runs the real tool with args and the proxy's environment and streams.
func (p *proxy) exec(args []string) error {
	if p.canReplaceProcess() {
		path := p.tool
		if !strings.ContainsRune(path, filepath.Separator) {
			path, _ = exec.LookPath(path)
		}
		if path != "" {
			err := syscall.Exec(path, append([]string{p.tool}, args...), p.env)
			// Exec returns only on failure; run the tool as a child instead.
			p.logf("exec %s: %v; running it as a child", p.tool, err)
		}
	}
	return p.spawn(args, p.stdio.Stdin, p.stdio.Stdout)
}

func (p *proxy) canReplaceProcess() bool {
	return runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" &&
		p.stdio.Stdin == io.Reader(os.Stdin) && p.stdio.Stdout == io.Writer(os.Stdout) && p.stdio.Stderr == io.Writer(os.Stderr)
}

// spawn runs the tool as a child process and maps its exit status.
func (p *proxy) spawn(args []string, stdin io.Reader, stdout io.Writer) error {
	cmd := exec.Command(p.tool, args...)
	cmd.Args[0] = p.tool
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, p.stdio.Stderr
	cmd.Env = p.env
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &ToolExitError{Tool: p.name, Code: code}
	}
	if err != nil {
		return fmt.Errorf("running %s: %w", p.tool, err)
	}
	return nil
}
