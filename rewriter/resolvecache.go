package rewriter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The keys and files of the resolver's two caches, one per build and one
// across builds (doc.go).

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
