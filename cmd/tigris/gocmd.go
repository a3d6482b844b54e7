package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

const goCmdHelp = `tigris go runs the go command with tigris as its build-tool wrapper:

  tigris go build ./...      = go build -toolexec="/abs/path/tigris toolexec" ./...
  tigris go test -race ./... = go test -toolexec="/abs/path/tigris toolexec" -race ./...

Everything after the subcommand is passed to go unchanged; output and exit status
are go's own. Supported subcommands: build, install, run, test, vet, list.

tigris.yaml is found upward from the current directory (or named by --config).
Without one the build is a plain build.

Flags (before the subcommand):
  --config FILE   use FILE as the config (exported as TIGRIS_CONFIG, absolute)
  --keep DIR      keep rewritten sources under DIR (exported as TIGRIS_KEEP)
  -v, --verbose   log match decisions and resolutions (exported as TIGRIS_LOG=1)
  -C DIR          passed to go: change to DIR first`

// goSubcommands are the go subcommands that build and accept -toolexec.
var goSubcommands = map[string]bool{"build": true, "install": true, "run": true, "test": true, "vet": true, "list": true}

func newGoCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "go [--config FILE] [--keep DIR] [-v] build|install|run|test|vet|list [ARG...]",
		Short:              "Run a go command with tigris instrumentation (go build -toolexec=\"tigris toolexec\")",
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
			goArgs, env, help, err := goCommandLine(self, args)
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			if help {
				return cmd.Help()
			}
			goExe, err := exec.LookPath("go")
			if err != nil {
				return fmt.Errorf("go: %w", err)
			}
			env = append(os.Environ(), env...)
			if runtime.GOOS != "windows" {
				// Become the go command: signals, output and exit status are its own.
				err := syscall.Exec(goExe, append([]string{"go"}, goArgs...), env)
				return fmt.Errorf("go: running %s: %w", goExe, err)
			}
			c := exec.Command(goExe, goArgs...)
			c.Stdin, c.Stdout, c.Stderr, c.Env = os.Stdin, os.Stdout, os.Stderr, env
			err = c.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				os.Exit(ee.ExitCode())
			}
			return err
		},
	}
}

// goCommandLine turns `tigris go ARGS` into the go command's arguments and the
// environment to add. self is the absolute path of the tigris executable.
func goCommandLine(self string, args []string) (goArgs, env []string, help bool, err error) {
	var pre []string // go's own leading flags (-C dir)
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "h", "help":
			return nil, nil, true, nil
		case "v", "verbose":
			if !hasValue || truthy(value) {
				env = append(env, "TIGRIS_LOG=1")
			}
		case "config", "keep", "C":
			if !hasValue {
				if i+1 >= len(args) {
					return nil, nil, false, fmt.Errorf("flag %s needs a value", a)
				}
				i++
				value = args[i]
			}
			switch name {
			case "C":
				pre = append(pre, "-C", value)
			case "config":
				abs, err := filepath.Abs(value)
				if err != nil {
					return nil, nil, false, err
				}
				if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
					return nil, nil, false, fmt.Errorf("config %s: not a file", value)
				}
				env = append(env, "TIGRIS_CONFIG="+abs)
			case "keep":
				abs, err := filepath.Abs(value)
				if err != nil {
					return nil, nil, false, err
				}
				env = append(env, "TIGRIS_KEEP="+abs)
			}
		default:
			return nil, nil, false, fmt.Errorf("unknown flag %s before the go subcommand (see tigris go --help)", a)
		}
	}
	if i >= len(args) {
		return nil, nil, true, nil
	}
	sub := args[i]
	if !goSubcommands[sub] {
		return nil, nil, false, fmt.Errorf("unsupported go subcommand %q: use one of build, install, run, test, vet, list", sub)
	}
	rest := args[i+1:]
	for _, a := range rest {
		if a == "--" || a == "-args" {
			break
		}
		if n := strings.TrimLeft(a, "-"); strings.HasPrefix(a, "-") && (n == "toolexec" || strings.HasPrefix(n, "toolexec=")) {
			return nil, nil, false, errors.New("-toolexec is what tigris go sets; to chain another wrapper run go with -toolexec yourself")
		}
	}
	goArgs = append(pre, sub, "-toolexec="+quoteToolexecWord(self)+" toolexec")
	goArgs = append(goArgs, rest...)
	return goArgs, env, false, nil
}

// quoteToolexecWord quotes a path for the go command's -toolexec value, which it
// splits like a shell word list (cmd/internal/quoted): single or double quotes
// around words with spaces.
func quoteToolexecWord(s string) string {
	if !strings.ContainsAny(s, " \t\n'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}
