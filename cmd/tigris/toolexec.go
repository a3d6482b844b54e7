package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/rewriter"
)

const toolexecHelp = `tigris toolexec is the build-tool wrapper the go command runs for every tool
invocation of a build when you pass -toolexec:

  go build -toolexec="tigris toolexec" ./...
  go test  -toolexec="tigris toolexec" ./...
  GOFLAGS='-toolexec=tigris toolexec' go build ./...

'tigris go build ...' adds the flag for you. You do not run this command yourself.

For each compile it rewrites the functions tigris.yaml selects (the rewritten
sources go to the build's work directory; your files are never changed), adds
export data for the monitor runtime the probes import, and answers the go
command's 'compile -V=full' with a fingerprint of the tigris binary, the config
and the runtime sources, so the build cache never mixes instrumented and plain
objects. That fingerprint keys every compile of the build, the standard
library's included: a config change recompiles everything once. 'tigris go'
avoids that: it keys only the packages it instruments (see tigris go --help). At link it adds the monitor runtime when an instrumented package needs
it. Every other tool (asm, cgo, vet, pack, ...) runs untouched, and a tool's exit
status is passed on exactly.

Without a tigris.yaml (searched upward from the go command's directory) nothing
is changed: the build, its cache entries and the binary are the same as without
-toolexec.

Flags (before TOOL):
  --config FILE   the config to use (default: $TIGRIS_CONFIG, else tigris.yaml
                  found upward from the go command's working directory)
  --keep DIR      keep rewritten sources under DIR/<import path> (default:
                  $TIGRIS_KEEP; otherwise they vanish with the build's $WORK);
                  an existing DIR/<import path> tigris did not make is refused
  -v, --verbose   log match decisions and resolutions to stderr ($TIGRIS_LOG=1)
  --plan FILE     the build plan 'tigris go' wrote; with it the compiler keeps
                  its own identity and only packages whose -gcflags carry
                  -tigris=DIGEST are instrumented (see tigris go --help)

Environment:
  TIGRIS_CONFIG, TIGRIS_KEEP, TIGRIS_LOG   as the flags above
  TIGRIS_NESTED   set by tigris on its own nested 'go list'; do not set it`

func newToolexecCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "toolexec [--config FILE] [--keep DIR] [-v] TOOL [ARG...]",
		Short:              "Wrap the go command's build tools (go build -toolexec=\"tigris toolexec\")",
		Long:               toolexecHelp,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, toolArgs, help, err := parseToolexecArgs(args, os.Getenv)
			if err != nil {
				return fmt.Errorf("toolexec: %w", err)
			}
			if help {
				return cmd.Help()
			}
			err = rewriter.RunTool(opts, toolArgs, rewriter.Stdio{
				Stdin:  cmd.InOrStdin(),
				Stdout: cmd.OutOrStdout(),
				Stderr: cmd.ErrOrStderr(),
			})
			var te *rewriter.ToolExitError
			if errors.As(err, &te) {
				// The tool reported its own failure; pass its status on, silently.
				os.Exit(te.Code)
			}
			return err
		},
	}
}

// parseToolexecArgs reads tigris's own flags, which come before the tool path,
// and the TIGRIS_* environment. It reports help when -h/--help comes before any
// tool.
func parseToolexecArgs(args []string, getenv func(string) string) (opts rewriter.SessionOptions, toolArgs []string, help bool, err error) {
	opts.ConfigPath = getenv("TIGRIS_CONFIG")
	opts.Keep = getenv("TIGRIS_KEEP")
	opts.Verbose = truthy(getenv("TIGRIS_LOG"))
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "h", "help":
			return opts, nil, true, nil
		case "v", "verbose":
			opts.Verbose = !hasValue || truthy(value)
		case "config", "keep", "plan":
			if !hasValue {
				if i+1 >= len(args) {
					return opts, nil, false, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			switch name {
			case "config":
				opts.ConfigPath = value
			case "keep":
				opts.Keep = value
			case "plan":
				opts.Plan = value
			}
		default:
			return opts, nil, false, fmt.Errorf("unknown flag %s (tigris's flags come before the tool path; see tigris toolexec --help)", a)
		}
	}
	if i >= len(args) {
		return opts, nil, true, nil
	}
	for _, p := range []*string{&opts.ConfigPath, &opts.Keep, &opts.Plan} {
		if *p != "" && !filepath.IsAbs(*p) {
			if *p, err = filepath.Abs(*p); err != nil {
				return opts, nil, false, err
			}
		}
	}
	return opts, args[i:], false, nil
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
