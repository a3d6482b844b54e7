package rewriter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/goflags"
)

// Resolving export data for imports the instrumenter adds.
//
// A compile's -importcfg lists only what the go command knows the package
// imports; the link's importcfg.link only what it knows the binary contains. For
// the monitor runtime that instrumented code imports, the proxy asks a nested
//
//	go list -deps -export -json=... <the parent's build flags> <packages>
//
// run in the go command's working directory with its environment, so the
// archives are compiled exactly as the parent build compiles them: same
// GOOS/GOARCH and env, same -race/-msan/-asan/-cover/-trimpath/-tags/-mod/
// -gcflags/-pgo... (archives resolved with other flags make the linker report
// "fingerprint mismatch"), but without -toolexec: nothing the nested go list
// compiles (the runtime module and its dependencies) is ever instrumented, and
// the parent compiles those dependencies unchanged too.
//
// # Where the parent's flags come from
//
// On Linux from /proc/<pid>/cmdline of the go command that started the tool (the
// parent process, or the nearest ancestor that looks like a go command) and its
// working directory from /proc/<pid>/cwd. Elsewhere only GOFLAGS is known, which
// the nested command inherits with the rest of the environment. Only flags that
// change compilation are replayed (goflags.Parse); -mod=mod becomes
// -mod=readonly, because nothing may edit go.mod in the middle of a build. With
// -pgo=auto the nested command gets the main package's default.pgo by name
// (goInvocation.pgoProfile), since go list cannot use the preprocessed copy the
// compiler is given.
//
// # Caching
//
// Once per build: the result is stored in $WORK/tigris/resolve-<key>.json, where
// key digests the go binary, the directory, the replayed flags, the PGO profile,
// the build environment (GO*, CGO_*, CC, ...) and the package list; a lock file
// next to it makes parallel compiles wait for the first one instead of each
// starting a go list. Across builds: os.UserCacheDir()/tigris/resolve/<key2>.json,
// where key2 adds the tigris fingerprint (executable, config, runtime sources) and
// the contents of go.mod/go.work/GOENV; a cached result is used only while every
// export file it names still exists.
//
// # Recursion
//
// The nested go list runs without -toolexec (a -toolexec in GOFLAGS is taken
// out) and with TIGRIS_NESTED set, so that a tigris that still ends up running
// inside it never starts another resolution: a compile there that needs one
// fails with an explanation.

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
		if s := err.Error(); strings.Contains(s, "provides package") || strings.Contains(s, "providing package") || strings.Contains(s, "not a known dependency") {
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

// buildKey digests everything that selects what the nested go list returns
// within one build.
func (r *resolver) buildKey(args []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", resolveVersion, r.inv.goExe, r.inv.dir)
	for _, a := range args {
		fmt.Fprintf(h, "arg %s\x00", a)
	}
	for _, kv := range buildEnv(r.inv.env.list) {
		fmt.Fprintf(h, "env %s\x00", kv)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// crossBuildKey adds what can change between builds with the same command line:
// the tigris fingerprint, the toolchain binary, the module files, the go env file
// and the PGO profile.
func (r *resolver) crossBuildKey(buildKey, fp string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", buildKey, fp)
	stamp := func(name string) {
		if fi, err := os.Stat(name); err == nil {
			fmt.Fprintf(h, "stat %s %d %d\x00", name, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	content := func(name string) {
		if data, err := os.ReadFile(name); err == nil {
			fmt.Fprintf(h, "file %s %d\x00", name, len(data))
			h.Write(data)
		}
	}
	stamp(r.inv.goExe)
	if r.pgo != "" {
		stamp(r.pgo)
	}
	for _, f := range r.inv.flags {
		if v, ok := strings.CutPrefix(f, "-modfile="); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(r.inv.dir, v)
			}
			content(v)
		}
		if v, ok := strings.CutPrefix(f, "-pgo="); ok && v != "auto" && v != "off" && r.pgo == "" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(r.inv.dir, v)
			}
			stamp(v)
		}
	}
	if root := findModuleRoot(r.inv); root != "" {
		content(filepath.Join(root, "go.mod"))
		content(filepath.Join(root, "go.work"))
		content(filepath.Join(root, "vendor", "modules.txt"))
	}
	if g := r.inv.env.goEnv; g != "" && g != "off" {
		content(g)
	} else if dir, err := os.UserConfigDir(); err == nil {
		content(filepath.Join(dir, "go", "env"))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// buildEnv returns, sorted, the variables of env that can change how the go
// command builds: GO*, CGO_*, and the C toolchain. GOROOT is left out: the go
// command sets it for link but not for compile, and the go binary (part of
// every key) already names the toolchain.
func buildEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "GOROOT":
		case strings.HasPrefix(name, "GO"), strings.HasPrefix(name, "CGO_"),
			name == "CC", name == "CXX", name == "FC", name == "AR", name == "PKG_CONFIG":
			out = append(out, kv)
		}
	}
	sort.Strings(out)
	return out
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

func (res *resolution) exportsExist() bool {
	for _, f := range res.Packages {
		if !fileExists(f) {
			return false
		}
	}
	return len(res.Packages) > 0
}

func readResolution(name string) (*resolution, bool) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, false
	}
	var res resolution
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, false
	}
	return &res, true
}

func writeResolution(name string, res *resolution) error {
	data, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return writeFileAtomic(name, data)
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
