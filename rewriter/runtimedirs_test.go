package rewriter

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/config"
)

// TestRuntimeDirsCoverImportGraph keeps runtimeDirs honest against the real
// import graph of what instrumented code links. The -V=full fingerprint and
// every package digest hash the runtime module's sources in runtimeDirs
// (hashSourceDirs), because the go command does not know that instrumented
// packages import them. So every package the generated code imports
// (LinkedPackages, with the admin endpoint), and every package those import,
// must be standard, or a package of the runtime module all of whose files
// the hash reads, or a package of a module the runtime module requires at a
// fixed version (which the user's go.sum pins). A runtime package that moves
// out of the hashed directories, a file kind the hash skips (an embedded
// file, say), or a new dependency through a replace fails here.
func TestRuntimeDirsCoverImportGraph(t *testing.T) {
	goExe, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	root, err := filepath.Abs(filepath.Join("..", "runtime"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("no runtime module beside the rewriter: %v", err)
	}
	edit := exec.Command(goExe, "mod", "edit", "-json")
	edit.Dir = root
	modJSON, err := edit.Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mf struct {
		Module  struct{ Path string }
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(modJSON, &mf); err != nil {
		t.Fatal(err)
	}
	if mf.Module.Path != runtimeModule {
		t.Fatalf("%s is module %s; want %s", root, mf.Module.Path, runtimeModule)
	}
	required := map[string]string{}
	for _, r := range mf.Require {
		required[r.Path] = r.Version
	}
	hashed := map[string]bool{}
	for _, d := range runtimeDirs {
		files, err := sourceFiles(root, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			hashed[f] = true
		}
	}

	s := &Session{cfg: &config.Config{AdminLink: true}}
	imports := s.LinkedPackages()
	args := append([]string{"list", "-deps", "-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,SFiles,HFiles,CFiles,EmbedFiles,Error"}, imports...)
	cmd := exec.Command(goExe, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	type module struct {
		Path, Version string
		Replace       *struct{ Path, Version string }
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	inRuntime := 0
	for {
		var p struct {
			ImportPath, Dir                                       string
			Standard                                              bool
			Module                                                *module
			GoFiles, CgoFiles, SFiles, HFiles, CFiles, EmbedFiles []string
			Error                                                 *struct{ Err string }
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch {
		case p.Error != nil:
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		case p.Standard:
		case p.Module == nil:
			t.Errorf("%s: neither standard nor in a module", p.ImportPath)
		case p.Module.Path == runtimeModule:
			inRuntime++
			if len(p.EmbedFiles) > 0 {
				t.Errorf("%s embeds %v, which the runtime's source hash does not read; hash them too (sourceFiles)", p.ImportPath, p.EmbedFiles)
			}
			for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.SFiles, p.HFiles, p.CFiles} {
				for _, f := range list {
					if file := filepath.Join(p.Dir, f); !hashed[file] {
						t.Errorf("%s: %s is linked into instrumented binaries but not in the hashed runtime sources (runtimeDirs %q)", p.ImportPath, file, runtimeDirs)
					}
				}
			}
		case p.Module.Replace != nil:
			t.Errorf("%s: module %s is replaced; instrumented binaries must link only std, the runtime module and modules it requires by version", p.ImportPath, p.Module.Path)
		case required[p.Module.Path] != p.Module.Version:
			t.Errorf("%s: module %s %s is not required by the runtime module's go.mod (requires %q)", p.ImportPath, p.Module.Path, p.Module.Version, required[p.Module.Path])
		}
	}
	if inRuntime < len(imports) {
		t.Errorf("go list found %d runtime packages for the %d imports %v", inRuntime, len(imports), imports)
	}
}
