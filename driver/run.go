package driver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/tigrisgo/tigris/goflags"
	"github.com/tigrisgo/tigris/rewriter"
)

// GoArgs returns the go command's arguments for b; self is the tigris
// executable. A plain run gets the user's arguments unchanged.
func (b *Build) GoArgs(self string) ([]string, error) {
	user := b.Inv.GoArgs
	if b.Plan == nil {
		return append([]string(nil), user...), nil
	}
	sub := 0
	for sub < len(user) && user[sub] != b.Inv.Command.Subcommand {
		if user[sub] == "-C" {
			sub++
		}
		sub++
	}
	toolexec, err := goflags.Join([]string{self, "toolexec", "--plan=" + b.PlanFile})
	if err != nil {
		return nil, fmt.Errorf("the tigris executable's path %w", err)
	}
	var added []string
	for _, p := range b.Packages {
		flags, err := goflags.Join(append(append([]string(nil), p.GCFlags...), "-"+rewriter.DigestFlag+"="+p.Digest))
		if err != nil {
			return nil, fmt.Errorf("-gcflags for %s: %w", p.ImportPath, err)
		}
		added = append(added, "-gcflags="+p.ImportPath+"="+flags)
	}
	insert := b.Inv.Command.Insert - 1 // Insert counts the go binary
	out := make([]string, 0, len(user)+len(added)+1)
	out = append(out, user[:sub+1]...)
	out = append(out, "-toolexec="+toolexec)
	out = append(out, user[sub+1:insert]...)
	out = append(out, added...)
	return append(out, user[insert:]...), nil
}

// Env returns what the go command's environment needs besides the caller's:
// the tigris flags the proxies read.
func (b *Build) Env() []string {
	var env []string
	if b.Inv.Keep != "" {
		env = append(env, "TIGRIS_KEEP="+b.Inv.Keep)
	}
	if b.Inv.Verbose {
		env = append(env, "TIGRIS_LOG=1")
	}
	return env
}

// Describe writes, for -v, what the run does.
func (b *Build) Describe(w io.Writer) {
	if b.Plan == nil {
		fmt.Fprintf(w, "tigris: plain go %s: %s\n", b.Inv.Command.Subcommand, b.Why)
		return
	}
	fmt.Fprintf(w, "tigris: %d package(s) may be instrumented (config %s, plan %s):\n", len(b.Packages), b.Config, b.PlanFile)
	for _, p := range b.Packages {
		fmt.Fprintf(w, "tigris:   %s %s\n", p.ImportPath, p.Digest)
	}
}

// Exec runs the go command with args and env and does not return on Unix
// (the process becomes the go command: its signals, output and exit status
// are the go command's own); elsewhere it exits with the go command's status.
func Exec(goExe string, args, env []string) error {
	if runtime.GOOS != "windows" {
		err := syscall.Exec(goExe, append([]string{"go"}, args...), env)
		return fmt.Errorf("running %s: %w", goExe, err)
	}
	c := exec.Command(goExe, args...)
	c.Stdin, c.Stdout, c.Stderr, c.Env = os.Stdin, os.Stdout, os.Stderr, env
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err == nil {
		os.Exit(0)
	}
	return err
}
