package rewriter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/goflags"
)

// Resolving export data for imports the instrumenter adds (doc.go).

// resolveVersion names the layout of the resolution cache.
const resolveVersion = "tigris-resolve-1"

// resolution is what one nested go list found: import path → export file.
type resolution struct {
	Packages map[string]string `json:",omitempty"`
	// Error is the failure of the nested go list, kept so that parallel compiles
	// waiting for it report it instead of running it again.
	Error string `json:",omitempty"`
}

// resolver resolves export data for one tool invocation.
type resolver struct {
	inv     *goInvocation // with the environment of the tool invocation
	workDir string        // the build's $WORK, "" when unknown
	pgo     string        // PGO profile the parent compiles with, "" for none
	// fingerprint returns the tigris fingerprint (computed lazily; needed only for
	// the cross-build cache).
	fingerprint func() (string, error)
	logf        func(format string, args ...any)
	// run runs the nested go list; tests replace it.
	run func(args []string) ([]byte, error)
}

// resolve returns export files for pkgs and all their dependencies.
func (r *resolver) resolve(pkgs []string) (map[string]string, error) {
	pkgs = uniqueSorted(pkgs)
	if r.inv.env.nested {
		return nil, fmt.Errorf("the export data of %s is needed while compiling for tigris's own nested go list (which resolves the monitor runtime): the config instruments a package the monitor runtime depends on; exclude it", strings.Join(pkgs, ", "))
	}
	if r.inv.versioned {
		return nil, fmt.Errorf("cannot resolve %s for `go %s pkg@version`: the nested go list cannot reproduce that build context; build the module from its own directory instead", strings.Join(pkgs, ", "), r.inv.subcommand)
	}
	args := r.listArgs(pkgs)
	key := r.buildKey(args)

	var local string // $WORK/tigris/resolve-<key>.json
	if r.workDir != "" {
		local = filepath.Join(r.workDir, "tigris", "resolve-"+key[:24]+".json")
		if res, ok := readResolution(local); ok {
			return res.result(pkgs)
		}
		unlock, err := lockFile(local + ".lock")
		if err != nil {
			return nil, err
		}
		defer unlock()
		if res, ok := readResolution(local); ok {
			return res.result(pkgs)
		}
	}

	var shared string // os.UserCacheDir()/tigris/resolve/<key2>.json
	if dir := tigrisCacheDir(); dir != "" && r.fingerprint != nil {
		if fp, err := r.fingerprint(); err == nil {
			shared = filepath.Join(dir, "resolve", r.crossBuildKey(key, fp)+".json")
			if res, ok := readResolution(shared); ok && res.Error == "" && res.exportsExist() {
				if local != "" {
					_ = writeResolution(local, res)
				}
				return res.result(pkgs)
			}
		}
	}

	start := time.Now()
	res := r.list(args)
	r.logf("resolved %s in %v with go list (flags from %s: %s)", strings.Join(pkgs, " "), time.Since(start).Round(time.Millisecond), r.inv.source, strings.Join(r.inv.flags, " "))
	if local != "" {
		if err := writeResolution(local, res); err != nil {
			return nil, err
		}
	}
	if shared != "" && res.Error == "" {
		_ = writeResolution(shared, res) // a cache: failing to write it only costs time
	}
	return res.result(pkgs)
}

// listArgs is the nested command line (without the go binary).
func (r *resolver) listArgs(pkgs []string) []string {
	args := []string{"list", "-deps", "-export", "-json=ImportPath,Export,Error"}
	for _, f := range r.inv.readOnly() {
		if r.pgo != "" && strings.HasPrefix(f, "-pgo=") {
			continue
		}
		args = append(args, f)
	}
	if r.pgo != "" {
		args = append(args, "-pgo="+r.pgo)
	}
	return append(args, pkgs...)
}

// list runs the nested go list and parses its output.
func (r *resolver) list(args []string) *resolution {
	run := r.run
	if run == nil {
		run = r.runGo
	}
	out, err := run(args)
	if err != nil {
		msg := fmt.Sprintf("go %s: %v", strings.Join(args, " "), err)
		switch s := err.Error(); {
		case strings.Contains(s, "missing go.sum entry"):
			msg += "\n\tgo.sum lacks checksums of the monitor runtime's packages or of what they import: " +
				"run go get " + runtimeModule + "/...@VERSION with the version go.mod requires (tigris init runs it), or go mod tidy"
		case strings.Contains(s, "provides package") || strings.Contains(s, "providing package") || strings.Contains(s, "not a known dependency"):
			msg += "\n\tthe module graph of this build must provide the monitor runtime that instrumented code imports: " +
				"require " + runtimeModule + " in go.mod (tigris init does this) and, when vendoring, import it from a file of the main module so go mod vendor copies it"
		}
		return &resolution{Error: msg}
	}
	res := &resolution{Packages: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	var errs []string
	for {
		var p struct {
			ImportPath string
			Export     string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return &resolution{Error: fmt.Sprintf("parsing go list output: %v", err)}
		}
		if p.Error != nil {
			errs = append(errs, p.ImportPath+": "+p.Error.Err)
		}
		if p.Export != "" {
			res.Packages[p.ImportPath] = p.Export
		}
	}
	if len(errs) > 0 {
		return &resolution{Error: strings.Join(errs, "; ")}
	}
	return res
}

// runGo runs the go command of the parent build with args in its directory.
func (r *resolver) runGo(args []string) ([]byte, error) {
	cmd := exec.Command(r.inv.goExe, args...)
	cmd.Dir = r.inv.dir
	cmd.Env = nestedEnviron(r.inv.env.list)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, err
		}
		return nil, fmt.Errorf("%v\n%s", err, msg)
	}
	return out, nil
}

// nestedEnviron is the tool's environment for the nested go list: without the
// per-tool variables the go command added and without a -toolexec in GOFLAGS,
// with the nesting marker.
func nestedEnviron(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "TOOLEXEC_IMPORTPATH=") || kv == "GOROOT=" || strings.HasPrefix(kv, nestedEnv+"=") {
			continue
		}
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			kv = "GOFLAGS=" + goflags.WithoutToolexec(v)
		}
		out = append(out, kv)
	}
	return append(out, nestedEnv+"=1")
}

// result returns the packages, or the recorded error; it also checks that every
// requested package was found.
func (res *resolution) result(pkgs []string) (map[string]string, error) {
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	for _, p := range pkgs {
		if _, ok := res.Packages[p]; !ok {
			return nil, fmt.Errorf("go list found no export data for %s", p)
		}
	}
	return res.Packages, nil
}

// uniqueSorted returns the distinct non-empty import paths of s that have
// export data ("unsafe" and "C" have none), sorted.
func uniqueSorted(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if v != "" && v != "unsafe" && v != "C" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}
