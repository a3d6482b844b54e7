package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/goflags"
	"github.com/tigrisgo/tigris/rewriter"
	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// Build is a prepared `tigris go` run.
type Build struct {
	Inv *Invocation
	// GoExe is the go command to run.
	GoExe string
	// Config is the tigris.yaml in use; "" when there is none.
	Config string
	// Packages are the packages that get a digest (and may be instrumented),
	// sorted by import path. Empty: the go command runs plain.
	Packages []Package
	// Plan and PlanFile are the plan the proxies read; nil and "" for a plain run.
	Plan     *rewriter.Plan
	PlanFile string
	// Why says why the run is plain, for -v.
	Why string
	// Note, when set, is what the user should be told even without -v:
	// why a config that selects something instruments nothing here
	// (rewriter.StdNote). Its lines end in a line break.
	Note string
}

// Package is one package of the build that tigris may instrument.
type Package struct {
	ImportPath string
	Digest     string
	// Selection is what the config can select in the package
	// (pointcut.Restrict), which its compile reads instead of the config.
	Selection string
	// GCFlags are the compiler flags the user's -gcflags give the package,
	// which the package's added -gcflags must repeat.
	GCFlags []string
}

// listed is the part of `go list -json` output Prepare reads.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	ForTest    string
	GoFiles    []string
	CgoFiles   []string
	Standard   bool
	DepOnly    bool
	Module     *listedModule
	Error      *struct{ Err string }
}

type listedModule struct {
	Path string
	Main bool
}

// Prepare finds the config, lists the build's packages and computes their
// digests. env is the environment the go command will run with.
func Prepare(ctx context.Context, inv *Invocation, env []string) (_ *Build, err error) {
	b := &Build{Inv: inv, GoExe: "go"}
	if g, err := exec.LookPath("go"); err == nil {
		b.GoExe = g
	}
	path, err := findConfig(inv, env)
	if err != nil {
		return nil, err
	}
	if path == "" {
		b.Why = "no tigris.yaml"
		return b, nil
	}
	b.Config = path
	s, err := rewriter.NewSession(rewriter.SessionOptions{ConfigPath: path, Dir: inv.Dir})
	if err != nil {
		return nil, fmt.Errorf("loading the tigris config: %w", err)
	}
	if !s.Active() {
		b.Why = path + " includes nothing"
		return b, nil
	}
	key := cacheKey(inv, b.GoExe, path, env)
	if st, ok := load(key); ok {
		b.Packages, b.Plan, b.Why, b.Note = st.Packages, st.Plan, st.Why, st.Note
		if b.Plan != nil {
			if err := b.write(); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	pkgs, err := list(ctx, b.GoExe, inv, env)
	if err != nil {
		return nil, err
	}
	identity, rtDir, err := rewriter.Identity(b.GoExe, inv.Dir, inv.Command.Flags, env)
	if err != nil {
		return nil, err
	}
	st := &stored{Dirs: map[string][]fileStamp{}, RtDir: rtDir}
	if rtDir != "" {
		st.Runtime = stampTree(rtDir)
	}
	for _, p := range pkgs {
		if !p.std && p.dir != "" {
			st.Dirs[p.dir] = stampDir(p.dir)
		}
	}
	defer func() {
		if err == nil {
			st.Packages, st.Plan, st.Why, st.Note = b.Packages, b.Plan, b.Why, b.Note
			save(key, st)
		}
	}()
	gcflags, err := userGCFlags(inv, env)
	if err != nil {
		return nil, err
	}
	var std []*pointcut.Syntax // kept to say why nothing is selected
	module := ""
	for _, p := range pkgs {
		syn := rewriter.PackageSyntax(p.path, p.files)
		if p.std {
			std = append(std, syn)
		} else if p.module != "" && module == "" {
			module = p.module
		}
		d, sel := s.PackageDigest(identity, syn, p.std)
		if d == "" {
			continue
		}
		b.Packages = append(b.Packages, Package{
			ImportPath: p.path,
			Digest:     d,
			Selection:  sel,
			GCFlags:    gcflags.For(goflags.Package{ImportPath: p.path, Dir: p.dir, Standard: p.std, Cmdline: p.cmdline}),
		})
	}
	if len(b.Packages) == 0 {
		b.Why = fmt.Sprintf("%s selects nothing in the %d packages of the build", path, len(pkgs))
		b.Note = rewriter.StdNote(s.StdOnly(s.Include(), std, module))
		return b, nil
	}
	b.Plan = s.Plan(path, identity)
	b.Plan.Dir = inv.Dir
	b.Plan.GoExe = b.GoExe
	b.Plan.Subcommand = inv.Command.Subcommand
	b.Plan.Flags = inv.Command.Flags
	b.Plan.Packages = inv.Command.Packages
	if err := b.write(); err != nil {
		return nil, err
	}
	return b, nil
}

// write stores the plan and the packages' selections for the build's tool
// invocations.
func (b *Build) write() (err error) {
	for _, p := range b.Packages {
		if err := rewriter.WriteSelection(p.Digest, p.Selection); err != nil {
			return err
		}
	}
	b.PlanFile, err = rewriter.WritePlan(b.Plan)
	return err
}

// findConfig is --config, else TIGRIS_CONFIG, else tigris.yaml upward from
// the go command's directory; "" when there is none.
func findConfig(inv *Invocation, env []string) (string, error) {
	if inv.Config != "" {
		return inv.Config, nil
	}
	if p := lookupEnv(env, "TIGRIS_CONFIG"); p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(inv.Dir, p)
		}
		return p, nil
	}
	p, err := config.Find(inv.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return p, err
}

// pkg is one package of the build, its test variants folded in.
type pkg struct {
	path, dir    string
	std, cmdline bool
	files        []string
	module       string // the main module's path, for a package of it
}

// list runs go list -deps (with -test for test and vet) over the command's
// packages and folds test variants into their package: they share its
// -gcflags.
func list(ctx context.Context, goExe string, inv *Invocation, env []string) ([]*pkg, error) {
	args := []string{"list", "-e", "-deps", "-json=ImportPath,Name,Dir,ForTest,GoFiles,CgoFiles,Standard,DepOnly,Module,Error"}
	if s := inv.Command.Subcommand; s == "test" || s == "vet" {
		args = append(args, "-test")
	}
	args = append(args, inv.Command.Flags...)
	args = append(args, inv.Command.Packages...)
	cmd := exec.CommandContext(ctx, goExe, args...)
	cmd.Dir = inv.Dir
	cmd.Env = withoutToolexec(env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// The go command itself will say what is wrong with the command line.
		return nil, &ListError{Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	byKey := map[string]*pkg{}
	var order []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading go list output: %w", err)
		}
		base, _, _ := strings.Cut(l.ImportPath, " [")
		if l.Name == "main" && strings.HasSuffix(base, ".test") {
			continue // a generated test main
		}
		key := base
		if l.ForTest != "" && base == l.ForTest+"_test" {
			key = l.ForTest // the external test package shares its package's flags
		}
		p := byKey[key]
		if p == nil {
			p = &pkg{path: key}
			byKey[key] = p
			order = append(order, key)
		}
		if base == key {
			p.dir, p.std = l.Dir, l.Standard
			p.cmdline = p.cmdline || !l.DepOnly
			if l.Module != nil && l.Module.Main {
				p.module = l.Module.Path
			}
		}
		for _, f := range append(l.GoFiles, l.CgoFiles...) {
			if !filepath.IsAbs(f) {
				f = filepath.Join(l.Dir, f)
			}
			p.files = append(p.files, f)
		}
	}
	pkgs := make([]*pkg, 0, len(order))
	for _, k := range order {
		p := byKey[k]
		sort.Strings(p.files)
		p.files = compact(p.files)
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// ListError is a failed go list: the build would fail the same way.
type ListError struct {
	Err    error
	Stderr string
}

func (e *ListError) Error() string {
	if e.Stderr != "" {
		return e.Stderr
	}
	return "go list: " + e.Err.Error()
}

// userGCFlags collects the user's -gcflags, from GOFLAGS first, then the
// command line, as the go command applies them.
func userGCFlags(inv *Invocation, env []string) (*goflags.PerPackage, error) {
	var pp goflags.PerPackage
	words, err := goflags.Split(lookupEnv(env, "GOFLAGS"))
	if err != nil {
		return nil, fmt.Errorf("GOFLAGS: %w", err)
	}
	var values []string
	for _, w := range words {
		name, v, ok := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if ok && name == "gcflags" && strings.HasPrefix(w, "-") {
			values = append(values, v)
		}
	}
	for _, f := range inv.Command.Flags {
		if v, ok := strings.CutPrefix(f, "-gcflags="); ok {
			values = append(values, v)
		}
	}
	for _, v := range values {
		if err := pp.Set(v, inv.Dir); err != nil {
			return nil, fmt.Errorf("-gcflags %w", err)
		}
	}
	return &pp, nil
}

func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// withoutToolexec is env with GOFLAGS's -toolexec removed (a go list needs
// none).
func withoutToolexec(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			kv = "GOFLAGS=" + goflags.WithoutToolexec(v)
		}
		out = append(out, kv)
	}
	return out
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
