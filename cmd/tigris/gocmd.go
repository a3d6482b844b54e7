package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/driver"
)

const goCmdHelp = `tigris go runs the go command with tigris instrumenting the packages that
tigris.yaml selects:

  tigris go build ./...
  tigris go test -race ./...

Before the go command runs, tigris lists the build's packages (go list -deps)
and finds, from their syntax, the packages where the pointcuts can select
something. Only those are compiled through tigris: each gets
-gcflags=PKG=<your flags for PKG> -tigris=<digest>, which keys the go
command's build cache on what tigris does to that package. Every other
package compiles exactly as in a plain build and shares its cache entries, an
edit of tigris.yaml recompiles only the packages whose selection it can
change, and a build where nothing is selected runs the go command plainly: the
binary links no tigris code at all.

Everything after the subcommand is passed to go; output and exit status are
go's own. One exception: when tigris.yaml selects nothing in the build because
its include entries select only standard-library functions (compiled unchanged
unless monitor.std is true), tigris says so on stderr first, with the
call(...) entry to write instead. Supported subcommands: build, install, run, test, vet, list.
go build -toolexec="tigris toolexec" also works, but keys every compile on the
whole config (see tigris toolexec --help).

tigris.yaml is found upward from the current directory (or named by --config
or TIGRIS_CONFIG). Without one the build is a plain build.

Flags (before the subcommand):
  --config FILE   use FILE as the config
  --keep DIR      keep rewritten sources under DIR (exported as TIGRIS_KEEP)
  -v, --verbose   say which packages may be instrumented, and log match
                  decisions and resolutions (exported as TIGRIS_LOG=1)
  -C DIR          passed to go: change to DIR first`

func newGoCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "go [--config FILE] [--keep DIR] [-v] build|install|run|test|vet|list [ARG...]",
		Short:              "Run a go command with tigris instrumentation",
		Long:               goCmdHelp,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("go: locating the tigris executable: %w", err)
			}
			if resolved, err := filepath.EvalSymlinks(self); err == nil {
				self = resolved
			}
			cwd, err := os.Getwd()
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			inv, help, err := driver.Args(args, cwd)
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			if help {
				return cmd.Help()
			}
			b, err := driver.Prepare(cmd.Context(), inv, os.Environ())
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			if inv.Verbose {
				b.Describe(cmd.ErrOrStderr())
			}
			printNote(cmd.ErrOrStderr(), "tigris: ", b.Note)
			goArgs, err := b.GoArgs(self)
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			return driver.Exec(b.GoExe, goArgs, append(os.Environ(), b.Env()...))
		},
	}
}
