package rewriter

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStdPatches applies the runtime and os/signal patches to this toolchain's
// own sources: each splice lands on the line it belongs to, and no line moves.
func TestStdPatches(t *testing.T) {
	for _, c := range []struct {
		pkg, file string
		patch     func(*CompileJob) (bool, error)
		line      string // a line of the patched file, trimmed
		extra     string
	}{
		{"runtime", "runtime2.go", patchRuntime, "tigris unsafe.Pointer; }", "tigris_slot.go"},
		{"os/signal", "signal.go", patchSignal, "handlers.Lock(); tigris_delivered[n] = handlers.ref[n]", "tigris_signal.go"},
	} {
		t.Run(c.pkg, func(t *testing.T) {
			files := goroot(c.pkg, c.file)
			if len(files) != 1 {
				t.Skipf("no %s in GOROOT", c.file)
			}
			orig, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			job := &CompileJob{ImportPath: c.pkg, Files: files, WorkDir: t.TempDir()}
			ok, err := c.patch(job)
			if err != nil || !ok {
				t.Fatalf("patch: %v, %v; this toolchain's %s lost the shape tigris patches", ok, err, c.pkg)
			}
			got, err := os.ReadFile(job.Files[0])
			if err != nil {
				t.Fatal(err)
			}
			directive, body, _ := bytes.Cut(got, []byte("\n"))
			if !strings.HasPrefix(string(directive), "//line ") || bytes.Count(body, []byte("\n")) != bytes.Count(orig, []byte("\n")) {
				t.Errorf("the patch moved lines or lost the //line directive")
			}
			if !strings.Contains(string(body), c.line) {
				t.Errorf("the patched file has no line ending in %q", c.line)
			}
			if len(job.Files) != 2 || filepath.Base(job.Files[1]) != c.extra {
				t.Errorf("files %q; want the patched one and %s", job.Files, c.extra)
			}

			// A file without the shape is left alone.
			plain := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(plain, []byte("package x\n\nvar handlers struct{}\n\ntype g struct{}\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			job = &CompileJob{ImportPath: c.pkg, Files: []string{plain}, WorkDir: t.TempDir()}
			if ok, err := c.patch(job); ok || err != nil || job.Files[0] != plain {
				t.Errorf("a file without the shape: patched %v, %v, files %q", ok, err, job.Files)
			}
		})
	}
}

// TestPatchMonitor: the monitor's portable slot and signal files are swapped
// for their linked versions (this toolchain has both shapes), and a monitor
// without them is an error rather than a silently unpatched build.
func TestPatchMonitor(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"monitor.go", "slot_portable.go", "signals_portable.go"} {
		files = append(files, filepath.Join(dir, name))
	}
	job := &CompileJob{ImportPath: monitorPath, Files: slices.Clone(files), WorkDir: t.TempDir(), Complete: true}
	if ok, err := patchMonitor(job); !ok || err != nil {
		t.Fatalf("patchMonitor: %v, %v", ok, err)
	}
	var names []string
	for _, f := range job.Files {
		names = append(names, filepath.Base(f))
	}
	if strings.Join(names, " ") != "monitor.go slot_linked.go signals_linked.go" || job.Complete {
		t.Errorf("files %q, complete %v", names, job.Complete)
	}
	job = &CompileJob{ImportPath: monitorPath, Files: slices.Clone(files[:2]), WorkDir: t.TempDir()}
	if _, err := patchMonitor(job); err == nil || !strings.Contains(err.Error(), "signals_portable.go") {
		t.Errorf("a monitor without signals_portable.go: %v", err)
	}
}
