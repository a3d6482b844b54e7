package rewriter

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

func TestMonitorCodeVersion(t *testing.T) {
	if monitorCodeVersion != monitor.CodeVersion {
		t.Fatalf("the rewriter generates code for monitor version %d; the monitor is version %d", monitorCodeVersion, monitor.CodeVersion)
	}
}

// TestCheckMonitorVersion checks the version check against monitor sources of
// the same, another and no version, in a directory the module graph names.
func TestCheckMonitorVersion(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // locateTigrisModule's cache
	for _, tc := range []struct {
		name, src, want string
	}{
		{"same", fmt.Sprintf("package monitor\n\nconst CodeVersion = %d\n", monitorCodeVersion), ""},
		{"other", "package monitor\n\n// CodeVersion ...\nconst CodeVersion = 99\n", "monitor runtime is version 99"},
		{"none", "package monitor\n", "monitor runtime is version none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := t.TempDir()
			writeFile(t, filepath.Join(fake, "go.mod"), "module github.com/tigrisgo/tigris/runtime\n\ngo 1.18\n")
			writeFile(t, filepath.Join(fake, "monitor", "version.go"), tc.src)
			user := t.TempDir()
			writeFile(t, filepath.Join(user, "go.mod"), "module example.com/user\n\ngo 1.24\n\nrequire github.com/tigrisgo/tigris/runtime v0.9.0\n\nreplace github.com/tigrisgo/tigris/runtime v0.9.0 => "+fake+"\n")
			inv := &goInvocation{goExe: "go", dir: user, env: processEnviron()}
			err := checkMonitorVersion(inv)
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "v0.9.0 => "+fake)):
				t.Fatalf("got %v; want an error containing %q and the module", err, tc.want)
			}
		})
	}
}

// TestCheckMonitorVersionWorkspace: a runtime that is a module of the
// workspace has no version; the instruction names its checkout instead of
// an install at an empty version.
func TestCheckMonitorVersionWorkspace(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // locateTigrisModule's cache
	fake := t.TempDir()
	writeFile(t, filepath.Join(fake, "go.mod"), "module github.com/tigrisgo/tigris/runtime\n\ngo 1.18\n")
	writeFile(t, filepath.Join(fake, "monitor", "version.go"), "package monitor\n\nconst CodeVersion = 99\n")
	user := t.TempDir()
	writeFile(t, filepath.Join(user, "go.mod"), "module example.com/user\n\ngo 1.24\n\nrequire github.com/tigrisgo/tigris/runtime v0.0.0\n")
	writeFile(t, filepath.Join(user, "go.work"), "go 1.24\n\nuse (\n\t.\n\t"+fake+"\n)\n")
	t.Setenv("GOWORK", filepath.Join(user, "go.work")) // also where the tests run with GOWORK=off
	inv := &goInvocation{goExe: "go", dir: user, env: processEnviron()}
	err := checkMonitorVersion(inv)
	if err == nil || !strings.Contains(err.Error(), "monitor runtime is version 99") ||
		!strings.Contains(err.Error(), "go install ./cmd/tigris in the tigris checkout that holds "+fake) ||
		strings.Contains(err.Error(), "/cmd/tigris@") {
		t.Fatalf("got %v; want the mismatch and an install from the checkout", err)
	}
}
