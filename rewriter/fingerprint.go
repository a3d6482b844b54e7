package rewriter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The -V=full fingerprint of a build without a plan (doc.go).

// fingerprintVersion names the layout of the fingerprint inputs; change it when
// what goes into the hash changes.
const fingerprintVersion = "tigris-fingerprint-2"

// runtimeModule is the module that provides the monitor runtime: a module of
// its own with a low go line, so requiring it never raises the user's.
const runtimeModule = "github.com/tigrisgo/tigris/runtime"

// runtimeDirs are the directories (relative to the runtime module root) whose
// sources end up in instrumented binaries: the whole runtime module, which
// holds exactly what user binaries link, so there is no list to keep in step.
// TestRuntimeDirsCoverImportGraph checks it against the import graph of what
// generated code imports.
var runtimeDirs = []string{"."}

// suffixVersionLine appends the tigris fingerprint to a tool's -V=full line.
// Release toolchains ("compile version go1.26.8 X:...") get " tigris=<fp>" at the
// end; devel toolchains, whose cache key is the content ID after the last "/" of
// the final buildID= field, get the suffix before that field and the fingerprint
// folded into the content ID.
func suffixVersionLine(line, fp string) (string, error) {
	trimmed := strings.TrimRight(line, "\r\n")
	f := strings.Fields(trimmed)
	if len(f) < 3 || f[1] != "version" || strings.Contains(trimmed, "\n") {
		return "", fmt.Errorf("unexpected -V=full output %q", line)
	}
	if strings.Contains(f[2], "devel") {
		last := f[len(f)-1]
		if !strings.HasPrefix(last, "buildID=") {
			return "", fmt.Errorf("unexpected -V=full output of a devel toolchain %q", line)
		}
		head := strings.TrimSuffix(strings.TrimRight(trimmed, " "), last)
		return fmt.Sprintf("%stigris=%s %s.tigris%s\n", head, fp, last, fp[:32]), nil
	}
	return trimmed + " tigris=" + fp + "\n", nil
}

// computeFingerprint returns the hex SHA-256 of the three fingerprint inputs;
// config is the config digest the tool's output depends on.
func computeFingerprint(config []byte, inv *goInvocation) (string, error) {
	self, err := executableHash()
	if err != nil {
		return "", fmt.Errorf("fingerprinting the tigris executable: %w", err)
	}
	rt, err := runtimeSourcesHash(inv)
	if err != nil {
		return "", fmt.Errorf("fingerprinting the monitor runtime sources: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\nexe %s\nconfig %x\nruntime %s\n", fingerprintVersion, self, config, rt)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// executableHash returns the hex SHA-256 of the running tigris binary. The
// binary is tens of MB, so the result is cached in the user cache dir under a key
// made of its path, size and modification time.
func executableHash() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	key := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano())))
	var cacheFile string
	if dir := tigrisCacheDir(); dir != "" {
		cacheFile = filepath.Join(dir, "exe", hex.EncodeToString(key[:16]))
		if b, err := os.ReadFile(cacheFile); err == nil && len(bytes.TrimSpace(b)) == 64 {
			return string(bytes.TrimSpace(b)), nil
		}
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if cacheFile != "" {
		_ = writeFileAtomic(cacheFile, []byte(sum+"\n")) // a cache: failing to write it only costs time
	}
	return sum, nil
}

// tigrisCacheDir is os.UserCacheDir()/tigris, or "" when there is none.
func tigrisCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return ""
	}
	return filepath.Join(dir, "tigris")
}

// listedModule is the part of `go list -m -json` output the fingerprint uses.
type listedModule struct {
	Path    string
	Version string
	Dir     string
	Main    bool
	Replace *struct {
		Path    string
		Version string
		Dir     string
	}
}

// runtimeSourcesHash identifies the monitor runtime sources the user's build
// links. It asks `go list -m` (no package loading) which tigris module the build
// context selects, and caches that answer under a key made of the go binary, the
// directory, the module flags, the GO* environment and the contents of the
// go.mod, go.work and vendor/modules.txt that govern the directory, so a warm
// -V=full costs a few file reads. A module-cache version is immutable and is
// named by path@version; a directory (a replace, a workspace module, the main
// module, a vendor copy) has its runtime sources hashed on every call. A build
// whose module graph has no tigris gets "none": instrumenting there fails later
// with the resolver's explanation.
func runtimeSourcesHash(inv *goInvocation) (string, error) {
	m, err := locateTigrisModule(inv)
	if err != nil {
		return "", err
	}
	if m == nil {
		return "none", nil
	}
	dir, immutable := moduleSourceDir(m, inv)
	if immutable || dir == "" {
		id := m.Path + "@" + m.Version
		if m.Replace != nil {
			id += "=>" + m.Replace.Path + "@" + m.Replace.Version
		}
		return "module " + id, nil
	}
	sum, err := hashSourceDirs(dir, runtimeDirs)
	if err != nil {
		return "", err
	}
	return "dir " + sum, nil
}

// moduleSourceDir returns the directory holding the sources of the tigris
// module m as the build sees it ("" when unknown: not downloaded), and whether
// those sources are immutable (a module-cache version).
func moduleSourceDir(m *listedModule, inv *goInvocation) (dir string, immutable bool) {
	dir = m.Dir
	immutable = m.Version != "" && m.Replace == nil
	if m.Replace != nil {
		immutable = m.Replace.Version != ""
		if dir == "" && !immutable {
			dir = m.Replace.Dir
		}
	}
	if m.Dir == "" {
		// Vendor mode reports no Dir: the sources are under vendor/.
		if root := findModuleRoot(inv); root != "" {
			v := filepath.Join(root, "vendor", filepath.FromSlash(runtimeModule))
			if fi, err := os.Stat(v); err == nil && fi.IsDir() {
				dir, immutable = v, false
			}
		}
	}
	return dir, immutable
}

// locateTigrisModule returns `go list -m -json github.com/tigrisgo/tigris` as
// the build context sees it, nil when the module graph has no tigris.
func locateTigrisModule(inv *goInvocation) (*listedModule, error) {
	var cacheFile string
	if dir := tigrisCacheDir(); dir != "" {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", fingerprintVersion, inv.goExe, inv.dir)
		if fi, err := os.Stat(inv.goExe); err == nil {
			fmt.Fprintf(h, "%d %d\x00", fi.Size(), fi.ModTime().UnixNano())
		}
		for _, f := range inv.moduleFlags() {
			fmt.Fprintf(h, "flag %s\x00", f)
		}
		for _, kv := range buildEnv(inv.env.list) {
			fmt.Fprintf(h, "env %s\x00", kv)
		}
		for _, f := range moduleFiles(inv) {
			data, err := os.ReadFile(f)
			fmt.Fprintf(h, "file %s %v %d\x00", f, err == nil, len(data))
			h.Write(data)
		}
		cacheFile = filepath.Join(dir, "modules", hex.EncodeToString(h.Sum(nil))[:32]+".json")
		if data, err := os.ReadFile(cacheFile); err == nil {
			var cached struct{ Module *listedModule }
			if json.Unmarshal(data, &cached) == nil {
				return cached.Module, nil
			}
		}
	}

	args := append([]string{"list", "-m", "-json"}, inv.moduleFlags()...)
	cmd := exec.Command(inv.goExe, append(args, runtimeModule)...)
	cmd.Dir = inv.dir
	cmd.Env = nestedEnviron(inv.env.list)
	out, err := cmd.Output()
	var m *listedModule
	if err == nil {
		m = new(listedModule)
		if err := json.Unmarshal(out, m); err != nil {
			return nil, fmt.Errorf("parsing go list -m output: %w", err)
		}
	}
	if cacheFile != "" {
		if data, err := json.Marshal(struct{ Module *listedModule }{m}); err == nil {
			_ = writeFileAtomic(cacheFile, data) // a cache: failing to write it only costs time
		}
	}
	return m, nil
}

// moduleFiles lists the files that decide the module graph of inv.dir: the
// governing go.mod (or the -modfile), go.work and their vendor/modules.txt.
func moduleFiles(inv *goInvocation) []string {
	var files []string
	for _, f := range inv.flags {
		if v, ok := strings.CutPrefix(f, "-modfile="); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(inv.dir, v)
			}
			files = append(files, v)
		}
	}
	work := inv.env.goWork
	mod := false
	for d := inv.dir; !mod || work == ""; {
		if work == "" {
			if w := filepath.Join(d, "go.work"); fileExists(w) {
				work = w
			}
		}
		if m := filepath.Join(d, "go.mod"); !mod && fileExists(m) {
			files = append(files, m, filepath.Join(d, "vendor", "modules.txt"))
			mod = true
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if work != "" && work != "off" {
		files = append(files, work, filepath.Join(filepath.Dir(work), "vendor", "modules.txt"))
	}
	return files
}

// hashSourceDirs hashes the names and contents of the files sourceFiles
// lists under root/dirs. Missing directories contribute their absence.
func hashSourceDirs(root string, dirs []string) (string, error) {
	h := sha256.New()
	for _, d := range dirs {
		files, err := sourceFiles(root, d)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "dir %s %d\n", d, len(files))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			rel, _ := filepath.Rel(root, f)
			fmt.Fprintf(h, "file %s %d\n", filepath.ToSlash(rel), len(data))
			h.Write(data)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sourceFiles lists, sorted, the non-test .go, .s, .h and .c files under
// root/dir (recursively, skipping testdata and hidden or underscore
// directories): what the compiler can read of the packages there.
func sourceFiles(root, dir string) ([]string, error) {
	base := filepath.Join(root, dir)
	var files []string
	err := filepath.WalkDir(base, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == base && os.IsNotExist(err) {
				return fs.SkipDir
			}
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if path != base && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return fs.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go":
			if strings.HasSuffix(name, "_test.go") {
				return nil
			}
		case ".s", ".h", ".c":
		default:
			return nil
		}
		files = append(files, path)
		return nil
	})
	sort.Strings(files)
	return files, err
}

// findModuleRoot returns the directory of the go.work (unless GOWORK=off) or
// go.mod that governs inv's directory, "" when there is none.
func findModuleRoot(inv *goInvocation) string {
	if w := inv.env.goWork; w != "" && w != "off" {
		return filepath.Dir(w)
	}
	var mod string
	for d := inv.dir; ; {
		if inv.env.goWork != "off" {
			if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
				return d
			}
		}
		if mod == "" {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				mod = d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return mod
		}
		d = parent
	}
}
