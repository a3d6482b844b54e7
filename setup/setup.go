package setup

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tigrisgo/tigris/config"
)

// RuntimeModule is the module instrumented binaries link.
const RuntimeModule = "github.com/tigrisgo/tigris/runtime"

// KeepFile is the file that keeps the runtime requirement through go mod tidy.
const KeepFile = "tigris_runtime.go"

// KeepTag is the build tag KeepFile is built with: never, by any build.
const KeepTag = "tigris_runtime"

// Options say how to prepare the module.
type Options struct {
	// Dir is where the user runs tigris init (the module is found from it).
	Dir string
	// Force replaces an existing tigris.yaml.
	Force bool
	// NoGet leaves go.mod alone (only tigris.yaml is written).
	NoGet bool
	// Version is the runtime version to require: the tigris version, for a
	// released tigris.
	Version string
	// RuntimeDir, when set, is a checkout's runtime directory to require
	// through a replace (a development build of tigris).
	RuntimeDir string
	// Out receives what init does, Err the go command's own errors.
	Out, Err io.Writer
}

// Run prepares the module of opts.Dir.
func Run(ctx context.Context, opts Options) error {
	root, mod, err := moduleOf(ctx, opts.Dir)
	if err != nil {
		return err
	}
	path, err := config.WriteTemplate(root, mod, examplePackage(ctx, root, mod), opts.Force)
	switch {
	case errors.Is(err, config.ErrExists):
		fmt.Fprintf(opts.Out, "kept %s (--force replaces it)\n", filepath.Join(root, config.FileName))
	case err != nil:
		return err
	default:
		fmt.Fprintf(opts.Out, "wrote %s (instruments every function of %s; edit monitor.include to narrow it)\n", path, mod)
	}
	if opts.NoGet {
		return nil
	}
	keep, err := writeKeepFile(root)
	if err != nil {
		return err
	}
	if keep != "" {
		fmt.Fprintf(opts.Out, "wrote %s (keeps %s in go.mod; built by no build)\n", keep, RuntimeModule)
	}
	cmds, err := Commands(opts)
	if err != nil {
		return err
	}
	if line, err := goLine(ctx, root); err != nil {
		return err
	} else if line == "" {
		fmt.Fprintf(opts.Out, "go.mod has no go line, which the go command reads as go %s; writing that down keeps it (go get would write its own version)\n", ImpliedGoLine)
		cmds = append([][]string{{"mod", "edit", "-go=" + ImpliedGoLine}}, cmds...)
	}
	for _, args := range cmds {
		fmt.Fprintf(opts.Out, "go %s\n", strings.Join(quoteAll(args), " "))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = opts.Out, opts.Err
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s: %w (tigris.yaml is written; fix the error and run the printed commands in %s)", strings.Join(args, " "), err, root)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "vendor", "modules.txt")); err == nil {
		fmt.Fprintln(opts.Out, "the module vendors its dependencies: run go mod vendor")
	}
	return nil
}

// Commands are the go commands (arguments after "go") that make the module
// require the runtime: a go get at opts.Version, or, with opts.RuntimeDir, a
// replace to that directory and a go get of the replaced version. The go get
// names the module's packages (RuntimePackages), not the module: a go get of a
// module path records only the go.mod checksums of its dependencies, and the
// first instrumented build then fails on a missing go.sum entry for the
// runtime's own imports (participle).
func Commands(opts Options) ([][]string, error) {
	if opts.RuntimeDir != "" {
		abs, err := filepath.Abs(opts.RuntimeDir)
		if err != nil {
			return nil, err
		}
		if data, err := os.ReadFile(filepath.Join(abs, "go.mod")); err != nil {
			return nil, fmt.Errorf("--runtime %s: %w", opts.RuntimeDir, err)
		} else if m, err := config.ModulePath(data); err != nil || m != RuntimeModule {
			return nil, fmt.Errorf("--runtime %s: not the directory of %s (its go.mod says %q)", opts.RuntimeDir, RuntimeModule, m)
		}
		return [][]string{
			{"mod", "edit", "-require=" + RuntimeModule + "@v0.0.0", "-replace=" + RuntimeModule + "=" + abs},
			{"get", RuntimePackages + "@v0.0.0"},
		}, nil
	}
	if opts.Version == "" {
		return nil, errors.New("no runtime version: this tigris is a development build; give --runtime with the runtime directory of its checkout")
	}
	return [][]string{{"get", RuntimePackages + "@" + opts.Version}}, nil
}

// RuntimePackages is the pattern of every package of the runtime module, as
// go get takes it: getting packages (not just the module) adds the checksums
// of what they import to go.sum, and the module's requirements to go.mod.
const RuntimePackages = RuntimeModule + "/..."

// ImpliedGoLine is the go line the go command assumes for a go.mod without
// one (https://go.dev/ref/mod#go-mod-file-go). A go command that writes such a
// go.mod (go get, go mod tidy) adds its own version instead, which would move
// the module's language version and vet checks; tigris init writes this one
// first.
const ImpliedGoLine = "1.16"

// goLine returns the go line of the module in root, "" when it has none.
func goLine(ctx context.Context, root string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod edit -json: %w", err)
	}
	var mod struct{ Go string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("go mod edit -json: %w", err)
	}
	return mod.Go, nil
}

// moduleOf returns the root directory and path of the module of dir.
func moduleOf(ctx context.Context, dir string) (root, mod string, err error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", "", errors.New("no go.mod in this directory or above it (run go mod init first)")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", "", err
	}
	if mod, err = config.ModulePath(data); err != nil {
		return "", "", fmt.Errorf("%s: %w", gomod, err)
	}
	return filepath.Dir(gomod), mod, nil
}

// examplePackage is the package the example rule of tigris.yaml names: the
// first package of the module (in import path order) that is not a command,
// else its first package, else the module path. go list -find reads only
// package clauses, so a module whose dependencies are not downloaded, or that
// does not build, still gets one of its own packages.
func examplePackage(ctx context.Context, root, mod string) string {
	// -mod=readonly: a go command that may write go.mod would write a go line
	// into one without (see ImpliedGoLine), before init writes its own.
	cmd := exec.CommandContext(ctx, "go", "list", "-mod=readonly", "-e", "-find", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return mod
	}
	first := ""
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, name, ok := strings.Cut(line, " ")
		if !ok || name == "" || (path != mod && !strings.HasPrefix(path, mod+"/")) {
			continue // no package clause, or outside the module (vendor/)
		}
		if name != "main" {
			return path
		}
		if first == "" {
			first = path
		}
	}
	return cmp.Or(first, mod)
}

// writeKeepFile writes KeepFile in the module root, in the package of the
// root's Go files (a directory holds one package), unless it exists. It
// returns the path written, "" when the file was there.
func writeKeepFile(root string) (string, error) {
	path := filepath.Join(root, KeepFile)
	if _, err := os.Stat(path); err == nil {
		return "", nil
	}
	pkg := "tools"
	files, _ := filepath.Glob(filepath.Join(root, "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly); err == nil {
			pkg = af.Name.Name
			break
		}
	}
	return path, os.WriteFile(path, []byte(KeepSource(pkg)), 0o644)
}

// KeepSource is the content of KeepFile for package pkg.
func KeepSource(pkg string) string {
	return fmt.Sprintf(`//go:build %s

// This file keeps the tigris runtime in go.mod: instrumented builds link it,
// but no package of this module imports it, so go mod tidy would drop the
// requirement. No build sets the %s tag; tigris init wrote it.

package %s

import (
	_ %q
	_ %q
	_ %q
	_ %q
)
`, KeepTag, KeepTag, pkg, RuntimeModule+"/monitor", RuntimeModule+"/monitor/analyzer", RuntimeModule+"/monitor/atexit", RuntimeModule+"/monitor/admin")
}

// quoteAll quotes arguments for a shell where they need it.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t'\"$\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
