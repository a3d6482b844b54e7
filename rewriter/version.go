package rewriter

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
)

// monitorCodeVersion is the monitor.CodeVersion this rewriter generates code
// for (TestMonitorCodeVersion keeps the two in step).
const monitorCodeVersion = 9

// codeVersionDecl finds the constant in the monitor's sources.
var codeVersionDecl = regexp.MustCompile(`(?m)^\s*(?:const\s+)?CodeVersion\s*=\s*([0-9]+)\s*$`)

// checkMonitorVersion makes sure the monitor runtime the build's module graph
// provides speaks the contract this tigris generates code for. A tigris binary
// of another version than the module's requirement (an old `go install`ed
// tigris next to a newer go.mod, or the reverse) would otherwise fail with
// compile errors in generated code or a link error. It reads the monitor's
// sources (no compile), so it answers before anything is built against the
// wrong runtime. A module graph without tigris is left to the resolver, which
// explains that.
func checkMonitorVersion(inv *goInvocation) error {
	m, err := locateTigrisModule(inv)
	if err != nil || m == nil {
		return err
	}
	dir, _ := moduleSourceDir(m, inv)
	if dir == "" {
		return nil // not downloaded: the resolver's go list reports it
	}
	have := "none (a tigris older than the version check)"
	files, _ := filepath.Glob(filepath.Join(dir, "monitor", "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if sm := codeVersionDecl.FindSubmatch(data); sm != nil {
			if v, _ := strconv.Atoi(string(sm[1])); v == monitorCodeVersion {
				return nil
			}
			have = string(sm[1])
			break
		}
	}
	mod := strings.TrimSpace(m.Path + " " + m.Version)
	if m.Replace != nil {
		mod += " => " + strings.TrimSpace(m.Replace.Path+" "+m.Replace.Version)
	}
	var install string
	switch {
	case m.Replace != nil:
		install = "go install ./cmd/tigris in the tigris checkout the replace points into"
	case m.Version == "":
		// A module of the workspace (go.work) or the main module: a
		// checkout, which has no version to install from.
		install = "go install ./cmd/tigris in the tigris checkout that holds " + dir
	default:
		install = "go install " + tigrisModule + "/cmd/tigris@" + m.Version
	}
	return fmt.Errorf("version mismatch: this tigris (%s) generates code for monitor runtime version %d, but the module graph provides %s, whose monitor runtime is version %s; "+
		"use the tigris that matches the module (%s) or make the module require this tigris's runtime (run tigris init in the module: it keeps tigris.yaml and updates go.mod)",
		selfVersion(), monitorCodeVersion, mod, have, install)
}

// selfVersion describes the running tigris binary: its module version and
// where it was built from.
func selfVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown version"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	return bi.Main.Path + " " + v
}
