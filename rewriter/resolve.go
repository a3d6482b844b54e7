package rewriter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
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

// nestedEnv marks the environment of the nested go list.
const nestedEnv = "TIGRIS_NESTED"

// resolveVersion names the layout of the resolution cache.
const resolveVersion = "tigris-resolve-1"

// goInvocation is the go command that started this tool, as far as the proxy can
// tell: what it needs to run a nested go command that builds the same way.
type goInvocation struct {
	goExe      string   // the go binary
	dir        string   // its working directory
	subcommand string   // "build", "test", ...; "" when unknown
	flags      []string // build flags to replay, each "-name" or "-name=value"
	packages   []string // its package (or .go file) arguments
	// versioned reports package arguments of the form path@version (go install
	// or go run outside the current module), whose build context a nested go
	// command in the same directory cannot reproduce.
	versioned bool
	source    string // where the flags came from, for messages
}

// moduleFlags returns the replayed flags that select the module graph, for
// `go list -m`, with -mod=mod made read-only (see readOnly).
func (inv *goInvocation) moduleFlags() []string {
	var out []string
	for _, f := range inv.readOnly() {
		if strings.HasPrefix(f, "-mod=") || strings.HasPrefix(f, "-modfile=") {
			out = append(out, f)
		}
	}
	return out
}

// readOnly returns the replayed flags for a nested go command that must never
// edit go.mod or go.sum in the middle of the user's build: a -mod=mod (on the
// command line or in GOFLAGS) becomes -mod=readonly, so a module graph that
// lacks what the monitor needs fails with the go command's own explanation
// instead of being changed behind the user's back.
func (inv *goInvocation) readOnly() []string {
	out := make([]string, 0, len(inv.flags)+1)
	modMod := slices.Contains(strings.Fields(os.Getenv("GOFLAGS")), "-mod=mod")
	for _, f := range inv.flags {
		switch f {
		case "-mod=mod":
			modMod = true
			continue
		case "-mod=readonly", "-mod=vendor":
			modMod = false
		}
		out = append(out, f)
	}
	if modMod {
		out = append(out, "-mod=readonly")
	}
	return out
}

// findGoInvocation describes the go command running the tool at toolPath.
func findGoInvocation(toolPath string) *goInvocation {
	inv := &goInvocation{goExe: goBinary(toolPath), source: "GOFLAGS"}
	if runtime.GOOS == "linux" {
		pid := os.Getppid()
		for depth := 0; depth < 4 && pid > 1; depth++ {
			argv, err := readProcCmdline(pid)
			if err == nil {
				if cmd, ok := goflags.Parse(argv); ok {
					inv.subcommand, inv.flags, inv.packages, inv.versioned = cmd.Subcommand, cmd.Flags, cmd.Packages, cmd.Versioned
					inv.source = fmt.Sprintf("/proc/%d/cmdline", pid)
					if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil {
						inv.dir = cwd
					}
					break
				}
			}
			if pid, err = procParent(pid); err != nil {
				break
			}
		}
	}
	if inv.dir == "" {
		inv.dir, _ = os.Getwd()
	}
	return inv
}

// goBinary finds the go command of the toolchain a tool belongs to: the tool is
// $GOROOT/pkg/tool/<os_arch>/<name>, so $GOROOT/bin/go, falling back to the
// parent's executable and then to "go" on PATH.
func goBinary(toolPath string) string {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	if toolPath != "" {
		root := filepath.Dir(filepath.Dir(filepath.Dir(toolPath)))
		if g := filepath.Join(root, "bin", "go"+exe); fileExists(g) {
			return g
		}
	}
	if runtime.GOOS == "linux" {
		if g, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid())); err == nil && strings.HasPrefix(filepath.Base(g), "go") {
			return g
		}
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g
	}
	return "go"
}

func readProcCmdline(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSuffix(data, []byte{0})
	if len(data) == 0 {
		return nil, errors.New("empty cmdline")
	}
	return strings.Split(string(data), "\x00"), nil
}

// procParent returns the parent pid from /proc/<pid>/stat.
func procParent(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid ...; comm may contain spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, errors.New("malformed stat")
	}
	return strconv.Atoi(f[1])
}

// pgoProfile returns the profile to pass as -pgo to the nested go list for a
// compile the go command gave -pgoprofile=pre ("" when it gave none). pre is
// the go command's preprocessed copy in $WORK, which go list cannot use; the
// nested command needs the original. With an explicit -pgo=FILE the replayed
// flag already names it ("" is returned); with -pgo=auto it is the default.pgo
// of the main package being built: the one named in toolexecImportPath
// ("p [example.com/cmd/app]") when the go command made per-main variants, else
// the single default.pgo found in the directories of the command's package
// arguments.
func (inv *goInvocation) pgoProfile(pre, toolexecImportPath string) (string, error) {
	if pre == "" {
		return "", nil
	}
	for _, f := range inv.flags {
		if v, ok := strings.CutPrefix(f, "-pgo="); ok && v != "auto" && v != "" {
			return "", nil
		}
	}
	var dirs []string
	if i := strings.Index(toolexecImportPath, " ["); i >= 0 && !strings.HasSuffix(toolexecImportPath, ".test]") {
		dirs = append(dirs, inv.packageDir(strings.TrimSuffix(toolexecImportPath[i+2:], "]")))
	} else {
		args := inv.packages
		if len(args) == 0 {
			args = []string{"."}
		}
		for _, a := range args {
			if strings.HasSuffix(a, ".go") { // go run file.go: a file path
				if !filepath.IsAbs(a) {
					a = filepath.Join(inv.dir, a)
				}
				dirs = append(dirs, filepath.Dir(a))
				continue
			}
			dirs = append(dirs, inv.packageDir(a))
		}
	}
	var found []string
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if root, ok := strings.CutSuffix(d, string(filepath.Separator)+"..."); ok {
			found = append(found, findFiles(root, "default.pgo")...)
		} else if f := filepath.Join(d, "default.pgo"); fileExists(f) {
			found = append(found, f)
		}
	}
	slices.Sort(found)
	found = slices.Compact(found)
	if len(found) != 1 {
		return "", fmt.Errorf("cannot tell which default.pgo the go command used for this package (found %d: %s); pass -pgo=FILE or -pgo=off", len(found), strings.Join(found, ", "))
	}
	return found[0], nil
}

// packageDir maps a package argument (a directory, a pattern ending in /...,
// or an import path in the main module) to a directory ("" when unknown).
func (inv *goInvocation) packageDir(arg string) string {
	if arg == "." || arg == ".." || strings.HasPrefix(arg, "./") || strings.HasPrefix(arg, "../") || filepath.IsAbs(arg) {
		if !filepath.IsAbs(arg) {
			arg = filepath.Join(inv.dir, arg)
		}
		return filepath.Clean(arg)
	}
	for d := inv.dir; ; {
		if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					mod = strings.Trim(strings.TrimSpace(mod), `"`)
					if arg == mod {
						return d
					}
					if rest, ok := strings.CutPrefix(arg, mod+"/"); ok {
						return filepath.Join(d, filepath.FromSlash(rest))
					}
				}
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// findFiles returns the files called name under root, skipping testdata,
// vendor and hidden directories.
func findFiles(root, name string) []string {
	var out []string
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if e.IsDir() && path != root && (e.Name() == "testdata" || e.Name() == "vendor" || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_")) {
			return fs.SkipDir
		}
		if !e.IsDir() && e.Name() == name {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// resolution is what one nested go list found: import path → export file.
type resolution struct {
	Packages map[string]string `json:",omitempty"`
	// Error is the failure of the nested go list, kept so that parallel compiles
	// waiting for it report it instead of running it again.
	Error string `json:",omitempty"`
}

// resolver resolves export data for one tool invocation.
type resolver struct {
	inv     *goInvocation
	env     []string // the environment of the tool invocation
	workDir string   // the build's $WORK, "" when unknown
	pgo     string   // PGO profile the parent compiles with, "" for none
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
	if os.Getenv(nestedEnv) != "" {
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
	cmd.Env = nestedEnviron(r.env)
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
	for _, kv := range buildEnv(r.env) {
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
	if root := findModuleRoot(r.inv.dir); root != "" {
		content(filepath.Join(root, "go.mod"))
		content(filepath.Join(root, "go.work"))
		content(filepath.Join(root, "vendor", "modules.txt"))
	}
	if g := os.Getenv("GOENV"); g != "" && g != "off" {
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

// lockFile takes an exclusive lock by creating name (O_EXCL) with this process's
// pid in it, waiting while another live process holds it. A lock whose holder
// has died is taken over; after lockWait the caller proceeds without the lock
// (costing at worst a duplicate go list, never a wrong result: results are
// written atomically).
func lockFile(name string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(name) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if data, err := os.ReadFile(name); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && !processAlive(pid) {
				os.Remove(name)
				continue
			}
		}
		if time.Now().After(deadline) {
			return func() {}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockWait bounds how long a compile waits for another one's resolution.
var lockWait = 10 * time.Minute

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true // FindProcess opened it, so it exists
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
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
