package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/setup"
)

func newInitCmd() *cobra.Command {
	var opts setup.Options
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write tigris.yaml for the current module and require the tigris runtime in its go.mod",
		Long: `init prepares the module of the current directory for tigris:

 1. It writes tigris.yaml next to go.mod. The file includes every function and
    method of the module's packages (pointcut "module"), excludes String methods,
    and shows every other setting commented out with its default. Edit it, then
    check what it selects with "tigris match ./...". An existing tigris.yaml is
    kept unless --force is given.

 2. It writes tigris_runtime.go next to go.mod: a file that imports the runtime
    packages instrumented code uses, under a build tag no build sets. No build
    compiles it; it keeps the runtime required through "go mod tidy" and makes
    "go mod vendor" copy it.

 3. It makes go.mod require the runtime module ` + setup.RuntimeModule + `
    (a module of its own, with go 1.18: your go line does not change) at the
    version of this tigris:
        go get ` + setup.RuntimePackages + `@<version>
    A development build of tigris (built from a checkout) requires the runtime of
    that checkout instead:
        go mod edit -require=` + setup.RuntimeModule + `@v0.0.0 -replace=` + setup.RuntimeModule + `=<checkout>/runtime
        go get ` + setup.RuntimePackages + `@v0.0.0
    The go get names the runtime's packages (/...), so go.sum also gets the
    checksums of what they import and the first build needs no go mod tidy.
    A go.mod without a go line (read as go 1.16) first gets "go 1.16" written
    down (go mod edit -go=1.16), since go get would write its own version.
    init prints the commands it runs; they work the same typed by hand. Drop the
    replace before you publish the module. --no-get skips steps 2 and 3.

The tigris command itself is not added to the module: install it with
"go install github.com/tigrisgo/tigris/cmd/tigris@<version>" (or from a checkout).`,
		Example: `  tigris init                   # tigris.yaml, tigris_runtime.go, go get of the runtime
  tigris init --no-get          # only write tigris.yaml
  tigris init --runtime ~/src/tigris/runtime   # a checkout's runtime`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.Getwd()
			if err != nil {
				return err
			}
			opts.Dir, opts.Out, opts.Err = dir, cmd.OutOrStdout(), cmd.ErrOrStderr()
			if opts.RuntimeDir == "" && opts.Version == "" {
				if v := version(); !isDevelVersion(v) {
					opts.Version = v
				} else {
					opts.RuntimeDir = checkoutRuntime()
				}
			}
			if err := setup.Run(cmd.Context(), opts); err != nil {
				return fmt.Errorf("init: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite an existing tigris.yaml")
	cmd.Flags().BoolVar(&opts.NoGet, "no-get", false, "leave go.mod alone: only write tigris.yaml")
	cmd.Flags().StringVar(&opts.RuntimeDir, "runtime", "", "require the runtime module in `DIR` (a tigris checkout's runtime directory) through a replace")
	cmd.Flags().StringVar(&opts.Version, "runtime-version", "", "require the runtime module at `VERSION` (default: this tigris's own version)")
	return cmd
}

// isDevelVersion reports whether v is not a version go get can fetch: a local
// build, a VCS-stamped build of a modified checkout, or a pseudo-version of
// an unpublished commit (a build in a checkout).
func isDevelVersion(v string) bool {
	return v == "" || v == "(devel)" || strings.HasSuffix(v, "+dirty") ||
		strings.HasPrefix(v, "v0.0.0-") && checkoutRuntime() != ""
}

// checkoutRuntime is the runtime directory of the tigris checkout this binary
// was built from, found through the path the compiler recorded for this file
// (without -trimpath it is the real one); "" when there is none.
func checkoutRuntime() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	dir := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), "runtime")
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return ""
	}
	if m, err := config.ModulePath(data); err != nil || m != setup.RuntimeModule {
		return ""
	}
	return dir
}
