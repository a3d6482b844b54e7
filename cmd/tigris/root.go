package main

import (
	"github.com/spf13/cobra"
)

// newRootCmd builds the command tree. Subcommands are listed here, in help order,
// rather than registering themselves from init.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tigris",
		Short: "Adaptive method-level monitoring for Go, compiled in with -toolexec",
		Long: `tigris rewrites the functions your tigris.yaml selects while the go command
compiles them, so a binary carries probes you switch at run time: off, coarse
(cheap per-function statistics) or fine (per-call trace records, sampled).

  tigris init                  write tigris.yaml for the current module
  tigris match ./...           list the functions tigris.yaml would instrument
  tigris go build ./...        build with probes (= go build -toolexec="tigris toolexec")`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newToolexecCmd(),
		newGoCmd(),
		newInitCmd(),
		newAnalyzeCmd(),
		newMatchCmd(),
		newDemoCmd(),
		newCtlCmd(),
		newDashCmd(),
		newReadCmd(),
		newStatsCmd(),
		newConvertCmd(),
		newQueryCmd(),
		newExportCmd(),
		newBenchCmd(),
		newVersionCmd(),
	)
	return root
}
