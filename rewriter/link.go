package rewriter

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The link step: the run-time settings are linked in, and the runtime packages
// instrumented code imports are added to the importcfg when the go command
// did not list them.

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
	what := p.env.importPath
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
