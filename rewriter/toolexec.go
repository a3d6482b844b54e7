package rewriter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// The toolexec proxy: RunTool, one tool invocation (see doc.go).

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
		env:   processEnviron(),
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
// compile, and the session comes from the plan and the package's selection
// (PlannedSession): no tool invocation parses tigris.yaml.
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
	digest := ""
	if p.name == "compile" {
		if digest, err = flagValue(p.args, DigestFlag); err != nil {
			return fmt.Errorf("compile: %w", err)
		}
		if digest == "" {
			return p.exec(p.args)
		}
	}
	p.opts.ConfigPath, p.opts.Dir = plan.Config, plan.Dir
	s, err := PlannedSession(plan, digest)
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.name, p.env.importPath, err)
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

// flagValue is the value of -name=value in args, response files expanded;
// "" when there is none.
func flagValue(args []string, name string) (string, error) {
	expanded, _, err := expandResponseFiles(args, 0)
	if err != nil {
		return "", err
	}
	for _, a := range expanded {
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v, nil
		}
	}
	return "", nil
}

// ToolName is the name of the tool at path: its base name without ".exe".
func ToolName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".exe")
}

// proxy is one tool invocation.
type proxy struct {
	opts  SessionOptions
	stdio Stdio
	tool  string   // path of the real tool
	name  string   // "compile", "link", ...
	args  []string // as the go command passed them
	// env is the environment, read once when RunTool starts (environ.go).
	env     environ
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
			p.inv = invocationOf(p.plan, p.env)
			return
		}
		p.inv = findGoInvocation(p.tool, p.env)
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
		p.fp, p.fpErr = computeFingerprint(p.session.BuildHash(), p.invocation())
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
		fp, err = computeFingerprint(s.ConfigHash(), p.invocation())
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

// resolver returns a resolver for this invocation.
func (p *proxy) resolver(work, pgo string) *resolver {
	return &resolver{
		inv:         p.invocation(),
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
			err := syscall.Exec(path, append([]string{p.tool}, args...), p.env.list)
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

// command is the wrapped tool run with args, in the build's environment.
func (p *proxy) command(args []string) *exec.Cmd {
	cmd := exec.Command(p.tool, args...)
	cmd.Args[0] = p.tool
	cmd.Env = p.env.list
	return cmd
}

// spawn runs the tool as a child process and maps its exit status.
func (p *proxy) spawn(args []string, stdin io.Reader, stdout io.Writer) error {
	cmd := p.command(args)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, p.stdio.Stderr
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
