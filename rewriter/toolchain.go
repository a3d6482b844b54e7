package rewriter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// The toolchain check (doc.go).

var (
	toolchainOnce sync.Once
	toolchainErr  error
)

// checkToolchain reports a toolchain of another Go release than this tigris
// was built with, once per process. A toolchain without a VERSION file (a
// development build of Go) is not checked.
func checkToolchain(toolPath string) error {
	toolchainOnce.Do(func() {
		goroot := toolGOROOT(toolPath)
		data, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
		if err != nil {
			return
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		toolchainErr = sameRelease(string(line), runtime.Version(), moduleVersion())
	})
	return toolchainErr
}

// sameRelease compares the releases (go1.N) of the build's toolchain and of
// tigris, whose module version is version ("" for a build in a checkout).
// The command it names can be typed as it is: the go line of tigris's
// go.mod would otherwise choose the release tigris is already built with.
func sameRelease(build, self, version string) error {
	if !strings.HasPrefix(build, "go1.") || !strings.HasPrefix(self, "go1.") || release(build) == release(self) {
		return nil
	}
	target, where := tigrisModule+"/cmd/tigris@"+version, ""
	if version == "" {
		target, where = "./cmd/tigris", " in tigris's checkout"
	}
	install := fmt.Sprintf("GOTOOLCHAIN=%s go install %s%s", build, target, where)
	// go install writes $GOBIN/tigris (else $GOPATH/bin/tigris): the tigris
	// of the other release is gone then, unless the second goes elsewhere.
	second := fmt.Sprintf("GOBIN=$HOME/go/bin/%s GOTOOLCHAIN=%s go install %s%s", release(build), build, target, where)
	return fmt.Errorf("tigris was built with %s, but this build compiles with %s; a tigris of one Go release cannot read the export data of another: rebuild tigris with the build's toolchain (%s); that replaces the installed tigris (built with %s): to keep both, install the second into a directory of its own (%s) and run $HOME/go/bin/%s/tigris for %s builds",
		self, build, install, release(self), second, release(build), release(build))
}

// moduleVersion is the version of the running tigris's module, "" for a
// build in a checkout (no version, a pseudo-version or a modified tree).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	v := bi.Main.Version
	if !strings.HasPrefix(v, "v") || strings.HasPrefix(v, "v0.0.0-") || strings.HasSuffix(v, "+dirty") {
		return ""
	}
	return v
}

// release is "go1.N" of a Go version such as "go1.27.3" or "go1.27rc1".
func release(v string) string {
	rest := strings.TrimPrefix(v, "go1.")
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	return "go1." + rest[:end]
}

// toolGOROOT is the GOROOT of a tool at GOROOT/pkg/tool/GOOS_GOARCH/NAME.
func toolGOROOT(toolPath string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(toolPath))))
}
