package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tigrisgo/tigris/rewriter"
)

// The plan cache. Planning a build lists its packages (go list -deps) and
// reads their syntax: a few hundred milliseconds that a rebuild after no
// change should not pay. A plan is stored under a key made of everything
// that selects the build's packages and their digests without reading
// sources (the tigris binary, the config's content, the command line, the
// build environment, the go binary, go.mod, go.sum, go.work and
// vendor/modules.txt up from the directory), together with the state of the
// directories whose sources it read (their .go files' names, sizes and
// modification times) and of the runtime module's directory when that is a
// checkout. A stored plan is used while all of those are unchanged; any
// difference plans again. Standard-library directories are not checked: the
// go binary and its version are part of the key.

// cacheVersion names the layout of stored plans.
const cacheVersion = "tigris-driver-2"

// stored is one cached plan.
type stored struct {
	Dirs     map[string][]fileStamp // directory → its .go files
	Runtime  []fileStamp            // the runtime checkout's files, when it is one
	RtDir    string
	Packages []Package
	Plan     *rewriter.Plan
	Why      string
	Note     string
}

type fileStamp struct {
	Name  string
	Size  int64
	MTime int64
}

// cacheKey digests the inputs named above, "" when there is no cache dir.
func cacheKey(inv *Invocation, goExe, config string, env []string) string {
	dir := rewriter.CacheDir()
	if dir == "" {
		return ""
	}
	exe, err := rewriter.ExecutableHash()
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00exe %s\x00dir %s\x00go %s\x00", cacheVersion, exe, inv.Dir, goExe)
	if fi, err := os.Stat(goExe); err == nil {
		fmt.Fprintf(h, "gostat %d %d\x00", fi.Size(), fi.ModTime().UnixNano())
	}
	for _, a := range inv.GoArgs {
		fmt.Fprintf(h, "arg %s\x00", a)
	}
	fmt.Fprintf(h, "keep %s verbose %v\x00", inv.Keep, inv.Verbose)
	var vars []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GO") || strings.HasPrefix(name, "CGO_") || strings.HasPrefix(name, "TIGRIS_") ||
			name == "CC" || name == "CXX" || name == "HOME" || name == "XDG_CACHE_HOME" {
			vars = append(vars, kv)
		}
	}
	sort.Strings(vars)
	for _, kv := range vars {
		fmt.Fprintf(h, "env %s\x00", kv)
	}
	content := func(name string) {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintf(h, "missing %s\x00", name)
			return
		}
		defer f.Close()
		fmt.Fprintf(h, "file %s\x00", name)
		io.Copy(h, f)
	}
	content(config)
	for d := inv.Dir; ; {
		for _, n := range []string{"go.mod", "go.sum", "go.work", "go.work.sum", filepath.Join("vendor", "modules.txt")} {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				content(filepath.Join(d, n))
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return filepath.Join(dir, "driver", hex.EncodeToString(h.Sum(nil))[:32]+".json")
}

// stampDir returns the .go files of dir with their sizes and times.
func stampDir(dir string) []fileStamp {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []fileStamp
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			out = append(out, fileStamp{e.Name(), fi.Size(), fi.ModTime().UnixNano()})
		}
	}
	return out
}

// stampTree stamps every file below root (the runtime checkout).
func stampTree(root string) []fileStamp {
	var out []fileStamp
	filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if fi, err := e.Info(); err == nil {
			rel, _ := filepath.Rel(root, path)
			out = append(out, fileStamp{rel, fi.Size(), fi.ModTime().UnixNano()})
		}
		return nil
	})
	return out
}

func sameStamps(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// load returns the stored plan at key when its directories are unchanged.
func load(key string) (*stored, bool) {
	if key == "" {
		return nil, false
	}
	data, err := os.ReadFile(key)
	if err != nil {
		return nil, false
	}
	var s stored
	if json.Unmarshal(data, &s) != nil {
		return nil, false
	}
	for dir, stamps := range s.Dirs {
		if !sameStamps(stampDir(dir), stamps) {
			return nil, false
		}
	}
	if s.RtDir != "" && !sameStamps(stampTree(s.RtDir), s.Runtime) {
		return nil, false
	}
	return &s, true
}

// save stores a plan; failing to is only a cost.
func save(key string, s *stored) {
	if key == "" {
		return
	}
	data, err := json.Marshal(s)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(key), 0o777) == nil {
		tmp := key + fmt.Sprintf(".%d.tmp", os.Getpid())
		if os.WriteFile(tmp, data, 0o666) == nil {
			os.Rename(tmp, key)
		}
	}
}
