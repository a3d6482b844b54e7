package rewriter

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Which PGO profile a nested go list must use to build the runtime the way
// the parent build does.

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
