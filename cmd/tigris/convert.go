package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/traceconv"
)

func newConvertCmd() *cobra.Command {
	var to, out string
	var formats strings.Builder
	for _, f := range traceconv.Formats {
		fmt.Fprintf(&formats, "  %-11s %s\n              default output: FILE%s\n", f.Name, f.Description, f.Ext)
	}
	cmd := &cobra.Command{
		Use:   "convert --to FORMAT [-o OUT] FILE...",
		Short: "Convert trace files to OPEN.xtrace, Chrome/Perfetto, pprof or Kieker",
		Long: `convert reads trace files (.tgr) and writes them in another format:

` + formats.String() + `
FILE is the first input without its .tgr extension; -o names the output (a
directory for kieker), and -o - writes to standard output. The output is written
to a temporary file first and renamed when complete.

openxtrace, pprof and stats rebuild call trees; chrome and kieker convert record
by record. Every format streams the input, so files larger than memory convert.
Progress goes to standard error every million records; at the end convert says
what it wrote, how many records and how many the program lost. Damage in the
input is skipped and reported; convert fails only when nothing could be read or
the output cannot be written. docs/trace-tools.md describes each mapping.`,
		Example: `  tigris convert --to pprof tigris-out/app-4242.tgr && go tool pprof -top tigris-out/app-4242.pb.gz
  tigris convert --to chrome -o trace.json tigris-out/app-4242.tgr   # open in ui.perfetto.dev
  tigris convert --to kieker tigris-out/app-4242.tgr                 # tigris-out/app-4242-kieker/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd.OutOrStdout(), cmd.ErrOrStderr(), to, out, args)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "output format: "+strings.Join(traceconv.FormatNames(), ", "))
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file or directory; - for standard output")
	cmd.MarkFlagRequired("to")
	return cmd
}

func runConvert(stdout, stderr io.Writer, to, out string, paths []string) error {
	f, err := traceconv.FormatByName(to)
	if err != nil {
		return fmt.Errorf("convert: --to: %w", err)
	}
	if out == "" {
		out = f.DefaultOutput(paths[0])
	}
	r, err := openTraces("convert", stderr, paths)
	if err != nil {
		return err
	}
	defer r.Close()
	dst, err := createOutput(f, out, stdout)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	opt := traceconv.Options{Progress: newProgress("convert", stderr).update}
	rep, err := f.Convert(dst, r, opt)
	if err != nil {
		dst.abort()
		return fmt.Errorf("convert: writing %s: %w", out, err)
	}
	if err := checkInput("convert", stderr, paths, &rep); err != nil {
		dst.abort()
		return err
	}
	if err := dst.commit(); err != nil {
		return fmt.Errorf("convert: writing %s: %w", out, err)
	}
	msg := fmt.Sprintf("convert: wrote %s (%s", out, f.Name)
	if dst.size > 0 {
		msg += ", " + human.Bytes(dst.size)
	}
	msg += fmt.Sprintf(") from %d file(s): %d records", rep.Files, rep.Records)
	if rep.Traces > 0 {
		msg += fmt.Sprintf(" in %d call tree(s)", rep.Traces)
	}
	msg += fmt.Sprintf(", %d lost", rep.Lost)
	if rep.Unfinished > 0 {
		// Calls still running when the program's writer closed: read, not lost.
		msg += fmt.Sprintf(", %d unfinished", rep.Unfinished)
	}
	if rep.Gaps > 0 {
		msg += fmt.Sprintf(", %d bytes unreadable", rep.SkippedBytes)
	}
	fmt.Fprintln(stderr, msg)
	return nil
}

// output is where a conversion goes: standard output, or a temporary file
// renamed to its name once the conversion succeeded, so a failed or interrupted
// conversion never leaves a truncated file under the real name.
type output struct {
	io.Writer
	tmp     *os.File
	path    string   // final name of tmp
	made    []string // files and the directory created for a directory format, to undo
	size    int64    // bytes written, known after commit
	written *countingWriter
}

func createOutput(f *traceconv.Format, out string, stdout io.Writer) (*output, error) {
	if out == "-" {
		return &output{Writer: stdout}, nil
	}
	o := &output{path: out}
	if f.Dir {
		if _, err := os.Stat(out); errors.Is(err, os.ErrNotExist) {
			o.made = append(o.made, out)
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		for name, content := range f.Extra {
			p := filepath.Join(out, name)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				o.abort()
				return nil, err
			}
			o.made = append(o.made, p)
		}
		o.path = filepath.Join(out, f.MainFile)
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.path), "."+filepath.Base(o.path)+".*.tmp")
	if err != nil {
		o.abort()
		return nil, err
	}
	o.tmp = tmp
	o.written = &countingWriter{w: tmp}
	o.Writer = o.written
	return o, nil
}

func (o *output) commit() error {
	if o.tmp == nil {
		return nil
	}
	// CreateTemp made the file private; the output is an ordinary file.
	if err := o.tmp.Chmod(0o644); err != nil {
		o.abort()
		return err
	}
	if err := o.tmp.Close(); err != nil {
		o.abort()
		return err
	}
	if err := os.Rename(o.tmp.Name(), o.path); err != nil {
		o.abort()
		return err
	}
	o.size = o.written.n
	return nil
}

// abort removes what the conversion created, newest first.
func (o *output) abort() {
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
	}
	for i := len(o.made) - 1; i >= 0; i-- {
		os.Remove(o.made[i])
	}
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
