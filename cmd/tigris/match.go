package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/rewriter"
)

func newMatchCmd() *cobra.Command {
	var (
		configPath   string
		tags         string
		tests        bool
		asJSON       bool
		verbose      bool
		showProgress bool
	)
	cmd := &cobra.Command{
		Use:   "match [packages]",
		Short: "List the functions tigris.yaml instruments (compiles, writes nothing)",
		Long: `match loads the packages (default ./...) the way the go command does and lists
every function and method the config's monitor.include/exclude pointcuts select,
one per line as file:line:col, the signature pointcuts see, and in brackets
the monitor.include entries that select it. When more than one package may
match, a table follows on stderr: per package, its functions, those matched,
and those instrumented (matched, less those that get no probe).

It builds no binary and writes nothing, but it compiles as a build does: it
lists the packages (go list), type-checks those the pointcuts may match (go
list -export compiles what they import that the build cache lacks), and
compiles those with matches with -gcflags=-m=2 to learn what the compiler
inlines. With a warm build cache that takes about a second; with an empty one,
as long as compiling those packages and their imports. A step that runs longer
than 2 s is shown on stderr when it is a terminal, or with --progress.
docs/pointcuts.md, "Checking a selection".

It decides with the same code the toolexec proxy runs, so what match lists is
what "tigris go build" instruments. Functions the pointcuts match but that get
no probe are counted in the summary and listed with the reason under -v:
functions the compiler inlines (a probe would stop the inlining and can make
values escape at every caller; monitor.inlinable: probe instruments them
anyway, see docs/pointcuts.md), and those that never can (//go:nosplit,
//go:linkname, init). So are packages excluded as a whole (the standard library
unless std: true, tigris's own packages). The summary goes to stderr; after it,
each include entry that selects only standard-library functions gets a note
saying so, with the call(...) entry to write instead.

The config is the tigris.yaml found from the current directory upwards, or
--config, or $TIGRIS_CONFIG.`,
		Example: `  tigris match                     # everything under ./...
  tigris match ./internal/...      # one subtree
  tigris match -v --tags integration ./...
  tigris match --json | jq -r '.[].signature'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"./..."}
			}
			cfg, err := loadConfig(configPath)
			if err != nil {
				return err
			}
			opts := rewriter.MatchOptions{Patterns: args, Tests: tests}
			if tags != "" {
				opts.BuildFlags = []string{"-tags=" + tags}
			}
			progress := startMatchProgress(cmd.ErrOrStderr(), showProgress)
			opts.Progress = progress.step
			rep, err := rewriter.ListMatches(cfg, opts)
			progress.stop()
			if rep == nil {
				return err
			}
			if perr := printMatches(cmd.OutOrStdout(), cmd.ErrOrStderr(), rep, asJSON, verbose); perr != nil {
				return perr
			}
			// Entries that select only standard-library functions: say why
			// they instrument nothing, and what to write instead. (A hint:
			// when the packages cannot be listed, there is none.)
			if notes, nerr := rewriter.StdNotes(cfg, rep, opts); nerr == nil {
				printNote(cmd.ErrOrStderr(), "", rewriter.StdNote(notes))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "tigris.yaml to use (default: search upwards, or $TIGRIS_CONFIG)")
	f.StringVar(&tags, "tags", "", "comma-separated build tags, as for go build")
	f.BoolVar(&tests, "test", false, "also load _test.go files")
	f.BoolVar(&asJSON, "json", false, "print a JSON array instead of lines")
	f.BoolVarP(&verbose, "verbose", "v", false, "also list matched functions that get no probe, and excluded packages")
	f.BoolVar(&showProgress, "progress", false, "show the steps that run over 2 s on stderr even when it is no terminal (a line every 10 s)")
	return cmd
}

// loadConfig finds and loads tigris.yaml like the toolexec proxy does.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		path = os.Getenv("TIGRIS_CONFIG")
	}
	if path == "" {
		found, err := config.Find(".")
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no %s in this directory or above it (run tigris init, or pass --config)", config.FileName)
		}
		if err != nil {
			return nil, err
		}
		path = found
	}
	return config.Load(path)
}

type matchJSON struct {
	Signature string   `json:"signature"`
	Package   string   `json:"package"`
	Name      string   `json:"name"` // a literal's Go name in its package: NewHandler.func1
	Pos       string   `json:"pos"`
	Skipped   string   `json:"skipped,omitempty"`
	By        []string `json:"by"` // the monitor.include entries that select it
}

func printMatches(stdout, stderr io.Writer, rep *rewriter.MatchReport, asJSON, verbose bool) error {
	wd, _ := os.Getwd()
	rel := func(name string) string {
		if r, err := filepath.Rel(wd, name); err == nil && !filepath.IsAbs(r) && len(r) < len(name) {
			return r
		}
		return name
	}
	instrumented := 0
	for _, m := range rep.Matches {
		if m.Skipped == "" {
			instrumented++
		}
	}
	if asJSON {
		out := []matchJSON{}
		for _, m := range rep.Matches {
			if m.Skipped != "" && !verbose {
				continue
			}
			out = append(out, matchJSON{
				Signature: m.Signature.String(), Package: m.Signature.Package, Name: m.Signature.Name + m.Signature.Lit,
				Pos: fmt.Sprintf("%s:%d:%d", rel(m.Pos.Filename), m.Pos.Line, m.Pos.Column), Skipped: m.Skipped,
				By: m.By,
			})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, m := range rep.Matches {
		switch {
		case m.Skipped == "":
			fmt.Fprintf(tw, "%s:%d:%d:\t%s  [%s]\n", rel(m.Pos.Filename), m.Pos.Line, m.Pos.Column, m.Signature.String(), strings.Join(m.By, ", "))
		case verbose:
			fmt.Fprintf(tw, "%s:%d:%d:\t%s  [%s] (no probe: %s)\n", rel(m.Pos.Filename), m.Pos.Line, m.Pos.Column, m.Signature.String(), strings.Join(m.By, ", "), m.Skipped)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if verbose && len(rep.Excluded) > 0 {
		paths := make([]string, 0, len(rep.Excluded))
		for p := range rep.Excluded {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			fmt.Fprintf(stderr, "excluded package %s: %s\n", p, rep.Excluded[p])
		}
	}
	if len(rep.PerPackage) > 1 || verbose {
		fmt.Fprintf(stderr, "%9s %7s %12s  %s\n", "functions", "matched", "instrumented", "package")
		for _, p := range rep.PerPackage {
			fmt.Fprintf(stderr, "%9d %7d %12d  %s\n", p.Functions, p.Matched, p.Instrumented, p.Path)
		}
	}
	fmt.Fprintf(stderr, "%d of %s in %s instrumented", instrumented, plural(rep.Functions, "function"), plural(rep.Packages, "package"))
	inlined, small := 0, 0
	for _, m := range rep.Matches {
		switch {
		case m.Skipped == rewriter.InlinedReason:
			inlined++
		case rewriter.IsSmall(m.Skipped):
			small++
		}
	}
	if n := len(rep.Matches) - instrumented - inlined - small; n > 0 {
		fmt.Fprintf(stderr, "; %d more matched but cannot carry a probe (-v lists them)", n)
	}
	if inlined > 0 {
		fmt.Fprintf(stderr, "; %d more matched but get no probe because the compiler inlines them, and a probe would change inlining and escapes (-v lists them; monitor.inlinable: probe instruments them anyway)", inlined)
	}
	if small > 0 {
		fmt.Fprintf(stderr, "; %d more matched but get no probe because they are too small to be worth one (-v lists them with their size; monitor.small: probe instruments them anyway)", small)
	}
	fmt.Fprintln(stderr)
	return nil
}

// printNote writes a note of several lines, each after prefix.
func printNote(w io.Writer, prefix, note string) {
	for _, line := range strings.SplitAfter(note, "\n") {
		if line != "" {
			fmt.Fprint(w, prefix+line)
		}
	}
}

// plural returns "1 function", "2 functions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
