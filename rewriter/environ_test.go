package rewriter

import (
	"go/ast"
	"path/filepath"
	"testing"
)

// TestEnvironmentReadOnce: the environment is read in environ.go only (once
// per tool invocation, into an environ passed down), so no function of the
// proxy depends on a variable its arguments do not show.
func TestEnvironmentReadOnce(t *testing.T) {
	readers := map[string]bool{"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true, "syscall.Getenv": true, "syscall.Environ": true}
	fset, files := sources(t)
	for name, f := range files {
		if name == "environ.go" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && readers[x.Name+"."+sel.Sel.Name] {
				t.Errorf("%s: %s.%s: read the environment through environ (environ.go)", fset.Position(sel.Pos()), x.Name, sel.Sel.Name)
			}
			return true
		})
	}
}

func TestEnvironOf(t *testing.T) {
	e := environOf([]string{"PATH=/bin", "TOOLEXEC_IMPORTPATH=p [p.test]", "GOFLAGS=-mod=mod", "GOFLAGS=-race", "GOWORK=off", "GOENV=/e", nestedEnv + "=1", "NOVALUE"})
	if e.importPath != "p [p.test]" || !e.nested || e.goFlags != "-race" || e.goWork != "off" || e.goEnv != "/e" || len(e.list) != 8 {
		t.Errorf("environOf = %+v", e)
	}
	if e := environOf([]string{nestedEnv + "="}); e.nested {
		t.Error("an empty TIGRIS_NESTED is not nested")
	}
}

// TestModuleRootFollowsEnviron: GOWORK comes from the invocation's
// environment, not the process's.
func TestModuleRootFollowsEnviron(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{"go.work": "go 1.26\n", "m/go.mod": "module m\n"})
	m := filepath.Join(dir, "m")
	for _, tc := range []struct{ gowork, want string }{
		{"", dir},
		{"off", m},
		{filepath.Join(dir, "other", "go.work"), filepath.Join(dir, "other")},
	} {
		inv := &goInvocation{dir: m, env: environOf([]string{"GOWORK=" + tc.gowork})}
		if got := findModuleRoot(inv); got != tc.want {
			t.Errorf("GOWORK=%q: findModuleRoot = %s; want %s", tc.gowork, got, tc.want)
		}
	}
}
