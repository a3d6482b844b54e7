package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/config"
)

// initModule is the module whose runtime instrumented programs import, and
// initToolPackage the command go get -tool adds.
const (
	initModule      = "github.com/tigrisgo/tigris"
	initToolPackage = initModule + "/cmd/tigris"
)

func newInitCmd() *cobra.Command {
	var force, noGet bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write tigris.yaml for the current module and add tigris to its go.mod",
		Long: `init prepares the module of the current directory for tigris:

 1. It writes tigris.yaml next to go.mod. The file includes every function and
    method of the module's packages (pointcut "module"), excludes String methods,
    and shows every other setting commented out with its default. Edit it, then
    check what it selects with "tigris match ./...". An existing tigris.yaml is
    left alone unless --force is given.

 2. It runs
        go get -tool ` + initToolPackage + `@<version>
    with the version of this tigris binary. That records tigris as a tool of the
    module (go tool tigris) and, more importantly, requires the tigris module, so
    the runtime package instrumented code imports resolves at the same version as
    the tool. This edits go.mod and go.sum and needs the module proxy, or a module
    cache that holds that version. --no-get skips the step.

A development build of tigris has no version to fetch; init then prints the
"go mod edit -replace" and "go get -tool" commands that use your checkout instead.
docs/config.md describes every key of tigris.yaml and the offline set-up.`,
		Example: `  tigris init                # tigris.yaml + go get -tool
  tigris init --no-get       # only write tigris.yaml
  tigris init --force        # replace an existing tigris.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), force, noGet)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing tigris.yaml")
	cmd.Flags().BoolVar(&noGet, "no-get", false, "do not run go get -tool (go.mod stays untouched)")
	return cmd
}

func runInit(ctx context.Context, stdout, stderr io.Writer, force, noGet bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	gomod, err := initGoEnv(ctx, "GOMOD")
	if err != nil {
		return err
	}
	if gomod == "" || gomod == os.DevNull {
		return errors.New("init: no go.mod in this directory or above it (run go mod init first)")
	}
	data, err := os.ReadFile(gomod)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	mod, err := config.ModulePath(data)
	if err != nil {
		return fmt.Errorf("init: %s: %w", gomod, err)
	}
	root := filepath.Dir(gomod)
	path, err := config.WriteTemplate(root, mod, force)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s (instruments every function of %s; edit monitor.include to narrow it)\n", path, mod)
	if noGet {
		return nil
	}

	v := version()
	if isDevelVersion(v) {
		fmt.Fprintf(stderr, `tigris is a development build (version %s): there is no version for go get to fetch.
To use this build's runtime from %s, point the module at your checkout:

	go mod edit -replace %s=%s
	go get -tool %s

(run them in %s; drop the replace before you publish the module)
`, v, mod, initModule, initCheckoutDir(), initToolPackage, root)
		return nil
	}
	args := []string{"get", "-tool", initToolPackage + "@" + v}
	fmt.Fprintf(stdout, "go %s\n", strings.Join(args, " "))
	goCmd := exec.CommandContext(ctx, "go", args...)
	goCmd.Dir = root
	goCmd.Stdout, goCmd.Stderr = stdout, stderr
	if err := goCmd.Run(); err != nil {
		return fmt.Errorf("init: go %s: %w (tigris.yaml is written; fix the error and rerun that command, or see docs/config.md for the offline set-up)", strings.Join(args, " "), err)
	}
	if _, err := os.Stat(filepath.Join(root, "vendor", "modules.txt")); err == nil {
		fmt.Fprintln(stdout, "the module vendors its dependencies: run go mod vendor")
	}
	return nil
}

// isDevelVersion reports whether v is not a version go get can fetch: a local build,
// or a VCS-stamped build of a modified checkout.
func isDevelVersion(v string) bool {
	return v == "" || v == "(devel)" || strings.HasSuffix(v, "+dirty")
}

// initGoEnv returns one variable of go env, which honours GOFLAGS=-modfile and
// GOWORK the way the go command itself will.
func initGoEnv(ctx context.Context, name string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "env", name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("init: go env %s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// initCheckoutDir guesses the root of the tigris checkout this binary was built
// from, using the path the compiler recorded for this file; without -trimpath it
// is the real directory.
func initCheckoutDir() string {
	_, file, _, ok := runtime.Caller(0)
	if ok && filepath.IsAbs(file) {
		dir := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if mod, err := config.ModulePath(data); err == nil && mod == initModule {
				return dir
			}
		}
	}
	return "/path/to/your/tigris/checkout"
}
