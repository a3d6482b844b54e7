package rewriter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// What a planned build keys each instrumented package on (doc.go).

// digestVersion names what goes into package digests.
const digestVersion = "tigris-package-1"

// Identity digests what every instrumented package's output depends on
// besides its own sources and the config: the tigris executable, the
// instrumenter's version, and the runtime module's sources as the module
// graph of the go command in dir (with flags and env) resolves them.
// runtimeDir is the directory of those sources when they can change (a
// replace to a checkout, a workspace module, a vendor copy), "" when they
// cannot (a module-cache version).
func Identity(goExe, dir string, flags, env []string) (id, runtimeDir string, err error) {
	inv := &goInvocation{goExe: goExe, dir: dir, flags: flags, env: environOf(env)}
	self, err := executableHash()
	if err != nil {
		return "", "", fmt.Errorf("fingerprinting the tigris executable: %w", err)
	}
	rt, err := runtimeSourcesHash(inv)
	if err != nil {
		return "", "", fmt.Errorf("fingerprinting the runtime sources: %w", err)
	}
	if m, err := locateTigrisModule(inv); err == nil && m != nil {
		if d, immutable := moduleSourceDir(m, inv); !immutable {
			runtimeDir = d
		}
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\nexe %s\ninstrumenter %s\nruntime %s\n", digestVersion, self, instrumenterVersion, rt)
	return hex.EncodeToString(h.Sum(nil)), runtimeDir, nil
}

// ExecutableHash is the hex SHA-256 of the running tigris binary (cached by
// path, size and modification time).
func ExecutableHash() (string, error) { return executableHash() }

// CacheDir is tigris's own cache directory (os.UserCacheDir()/tigris), ""
// when there is none.
func CacheDir() string { return tigrisCacheDir() }

// PackageDigest is the value of a package's DigestFlag in a planned build, ""
// when tigris leaves the package alone: it is excluded (std without std:
// true, tigris's own, ...) or the pointcuts select nothing its syntax allows.
// selection is what the pointcuts can select there (pointcut.Restrict), which
// the package's compile reads instead of the config (WriteSelection).
func (s *Session) PackageDigest(identity string, syn *pointcut.Syntax, std bool) (digest, selection string) {
	if !s.Active() || s.packageExcluded(syn.Path, std) != "" {
		return "", ""
	}
	r := s.cfg.Instrument.Restrict(syn)
	if r == "" {
		return "", ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\nidentity %s\nstd %v\ninlinable %s\npanics %s\nsmall %s\nfloor %v\nadmin %v\nselection\n%s",
		digestVersion, identity, s.cfg.Std, s.cfg.Inlinable, s.cfg.Panics, s.cfg.Small, s.cfg.Floor, s.cfg.AdminLink, r)
	return hex.EncodeToString(h.Sum(nil))[:32], r
}

// Plan starts the plan of a build with the part of the config its compiles
// and links need; the driver adds the go command's side.
func (s *Session) Plan(config, identity string) *Plan {
	return &Plan{
		Config:    config,
		Std:       s.cfg.Std,
		Inlinable: s.cfg.Inlinable,
		Panics:    s.cfg.Panics,
		Small:     s.cfg.Small,
		Floor:     s.cfg.Floor,
		AdminLink: s.cfg.AdminLink,
		Settings:  s.settingsText,
		LinkID:    s.LinkID(identity),
	}
}

// LinkID is the link -V=full suffix of a planned build: the whole config
// (the linker embeds the run-time settings) and the identity.
func (s *Session) LinkID(identity string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nidentity %s\nconfig %x\n", digestVersion, identity, s.ConfigHash())
	return hex.EncodeToString(h.Sum(nil))
}

// PackageSyntax reads what Restrict needs from a package's files: the
// functions declared with a body and every identifier written. Files that do
// not parse are skipped: the compiler reports them, and a package that does
// not compile is not instrumented.
func PackageSyntax(path string, files []string) *pointcut.Syntax {
	syn := &pointcut.Syntax{Path: path, Idents: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		syn.Main = syn.Main || f.Name.Name == "main"
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				syn.Decls = append(syn.Decls, declOf(fd))
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				syn.Idents[id.Name] = true
			}
			return true
		})
	}
	return syn
}

// declOf is the syntax of a function declaration: its name and receiver.
func declOf(fd *ast.FuncDecl) pointcut.Decl {
	d := pointcut.Decl{Name: fd.Name.Name}
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return d
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		d.RecvPtr, t = true, st.X
	}
	for {
		switch x := t.(type) {
		case *ast.ParenExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.StarExpr:
			d.RecvPtr, t = true, x.X
			continue
		case *ast.Ident:
			d.Recv = x.Name
		}
		return d
	}
}
