package rewriter

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/goflags"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// StdOnly is a monitor.include entry that selects functions of the standard
// library, which tigris compiles unchanged unless monitor.std is true: on
// its own it instruments nothing. Its calls from the module's packages can
// be instrumented instead, with a call(...) pointcut.
type StdOnly struct {
	// Entry is the monitor.include entry as written (a name or an expression).
	Entry string
	// Packages are the standard-library packages whose functions it selects,
	// sorted.
	Packages []string
	// Instead is the entry rewritten to select the calls of those functions
	// written in the module's packages; "" when none could be made.
	Instead string
}

// StdOnly returns, of the monitor.include entries among entries, those that
// select the execution of a function in one of the standard-library
// packages std (their syntax), in the order of entries. module is the main
// module's path, for the within(...) of the call-site pointcuts; "" leaves it
// out. Without monitor.std it is nil: those entries do instrument then.
func (s *Session) StdOnly(entries []string, std []*pointcut.Syntax, module string) []StdOnly {
	if s == nil || s.cfg == nil || s.cfg.Std || len(entries) == 0 {
		return nil
	}
	var out []StdOnly
	for _, e := range entries {
		pc, err := s.cfg.Env.Parse(e)
		if err != nil {
			continue
		}
		var pkgs []string
		for _, syn := range std {
			if s.packageExcluded(syn.Path, false) != "" || strings.HasPrefix(syn.Path, "internal/") || strings.Contains(syn.Path, "/internal/") {
				continue // not instrumented even with monitor.std
			}
			// Without the identifiers written in the package every call(...)
			// term is false there: what is left selects executions.
			execs := &pointcut.Syntax{Path: syn.Path, Main: syn.Main, Decls: syn.Decls, Idents: map[string]bool{}}
			if pc.Restrict(execs) != "" {
				pkgs = append(pkgs, syn.Path)
			}
		}
		if len(pkgs) == 0 {
			continue
		}
		sort.Strings(pkgs)
		out = append(out, StdOnly{Entry: e, Packages: pkgs, Instead: s.callInstead(e, module)})
	}
	return out
}

// executionDesignator finds the execution designators of an expression.
var executionDesignator = regexp.MustCompile(`\bexecution\s*\(`)

// callInstead rewrites entry (a name or an expression) to select the calls
// of what its execution(...) terms select, written in the packages of
// module: "" when the result does not parse or selects no call.
func (s *Session) callInstead(entry, module string) string {
	expr := entry
	if _, e, ok := s.cfg.Env.Lookup(entry); ok {
		expr = e
	}
	if !executionDesignator.MatchString(expr) {
		return ""
	}
	call := executionDesignator.ReplaceAllString(expr, "call(")
	if module != "" {
		if strings.Contains(call, "||") {
			call = "(" + call + ")"
		}
		call += " && within(" + module + "/...)"
	}
	if pc, err := s.cfg.Env.Parse(call); err != nil || !pc.HasCall() {
		return ""
	}
	return call
}

// StdNote says, for `tigris match` and `tigris go build`, why the entries
// instrument nothing and what to write instead; "" for none. Its lines end
// in a line break.
func StdNote(entries []StdOnly) string {
	var b strings.Builder
	for _, e := range entries {
		pkgs := e.Packages
		more := ""
		if len(pkgs) > 4 {
			more = fmt.Sprintf(" and %d more", len(pkgs)-4)
			pkgs = pkgs[:4]
		}
		fmt.Fprintf(&b, "monitor.include entry %s selects functions of the standard library (%s%s), which tigris compiles unchanged unless monitor.std is true, so it instruments nothing.\n",
			e.Entry, strings.Join(pkgs, ", "), more)
		if e.Instead != "" {
			fmt.Fprintf(&b, "To measure the calls your packages make to them, write this entry instead:\n    - %q\n", e.Instead)
			b.WriteString("or set monitor.std: true to instrument the functions themselves, for every caller (docs/pointcuts.md).\n")
		} else {
			b.WriteString("Select their calls in your packages with call(...) && within(your module/...) instead, or set monitor.std: true (docs/pointcuts.md).\n")
		}
	}
	return b.String()
}

// StdNotes is StdOnly for `tigris match`: of the include entries that
// select no function in rep, those that select functions of the standard
// library the packages of opts depend on.
func StdNotes(cfg *config.Config, rep *MatchReport, opts MatchOptions) ([]StdOnly, error) {
	if cfg == nil || cfg.Std || cfg.Instrument == nil {
		return nil, nil
	}
	matched := map[string]bool{}
	for _, m := range rep.Matches {
		for _, e := range m.By {
			matched[e] = true
		}
	}
	var entries []string
	for _, e := range cfg.Include {
		if !matched[e] {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	std, module, err := listStd(opts)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg}
	return s.StdOnly(entries, std, module), nil
}

// listStd lists, with go list -deps, the standard-library packages the
// packages of opts depend on, with their syntax, and the main module's path.
func listStd(opts MatchOptions) (std []*pointcut.Syntax, module string, err error) {
	const sep = "\x1f"
	args := []string{"list", "-e", "-deps", "-f",
		`{{if .Standard}}S` + sep + `{{.ImportPath}}` + sep + `{{.Dir}}{{range .GoFiles}}` + sep + `{{.}}{{end}}` +
			`{{else if .Module}}{{if .Module.Main}}M` + sep + `{{.Module.Path}}{{end}}{{end}}`}
	if opts.Tests {
		args = append(args, "-test")
	}
	args = append(append(args, opts.BuildFlags...), opts.Patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = opts.Dir
	env := opts.Env
	if env == nil {
		env = processEnviron().list
	}
	cmd.Env = append(env[:len(env):len(env)], "GOFLAGS="+goflags.WithoutToolexec(environOf(env).goFlags))
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("listing the standard-library packages of the build (go %s): %v", strings.Join(args, " "), err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, sep)
		switch {
		case f[0] == "M" && len(f) == 2 && module == "":
			module = f[1]
		case f[0] == "S" && len(f) >= 3:
			path, _, _ := strings.Cut(f[1], " [") // a test variant
			if seen[path] {
				continue
			}
			seen[path] = true
			files := make([]string, 0, len(f)-3)
			for _, name := range f[3:] {
				files = append(files, filepath.Join(f[2], name))
			}
			std = append(std, PackageSyntax(path, files))
		}
	}
	return std, module, nil
}

// Include returns the monitor.include entries of the session's config.
func (s *Session) Include() []string {
	if s == nil || s.cfg == nil {
		return nil
	}
	return s.cfg.Include
}
