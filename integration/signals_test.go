//go:build unix

package integration

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// signalFiles is a program that makes 100 fine records and then waits for
// SIGTERM in one of three ways: with its own signal.Notify channel (and
// reports a second delivery), with signal.NotifyContext whose stop it calls
// before a graceful shutdown, or without any handler.
var signalFiles = map[string]string{
	"tigris.yaml": itest.ShopConfig,
	"main.go": `package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"example.com/itest/work"
)

func main() {
	mode := os.Args[1]
	ch := make(chan os.Signal, 4)
	ctx, stop := context.Background(), func() {}
	switch mode {
	case "handler":
		signal.Notify(ch, syscall.SIGTERM)
	case "context":
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGTERM)
	}
	total := 0
	for i := range 100 {
		total += work.Step(i)
	}
	fmt.Println(total)
	fmt.Println("ready")
	switch mode {
	case "handler":
		<-ch
		select {
		case <-ch:
			fmt.Println("signalled twice")
		case <-time.After(500 * time.Millisecond):
		}
	case "context":
		<-ctx.Done()
		stop()
		time.Sleep(500 * time.Millisecond) // the graceful shutdown
	default:
		time.Sleep(time.Minute)
	}
	fmt.Println("graceful exit")
}
`,
	"work/work.go": `package work

// Step is one unit of work.
func Step(i int) int { return 2 * i }
`,
}

// TestSignals: tigris installs no signal handler, so a signal does exactly
// what it does without tigris. A program with its own handler gets the signal
// once and ends as it chooses, also when it stops its NotifyContext before
// shutting down, and the exit hook flushes every record although the writer's
// periodic flush is a minute away; a program without one dies by the signal,
// with the records written up to the last periodic flush (here 20 ms).
func TestSignals(t *testing.T) {
	dir := itest.NewModule(t, signalFiles)
	bin := filepath.Join(dir, "sigapp")
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")

	for _, mode := range []string{"handler", "context", "none"} {
		t.Run(mode, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace.tgr")
			cmd := exec.Command(bin, mode)
			flush := "1m"
			if mode == "none" {
				flush = "20ms"
			}
			cmd.Env = itest.Env("TIGRIS_MODE=fine", "TIGRIS_FLUSH="+flush, "TIGRIS_OUT="+trace)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			lines := bufio.NewScanner(stdout)
			for lines.Scan() {
				out.WriteString(lines.Text() + "\n")
				if lines.Text() == "ready" {
					break
				}
			}
			if mode == "none" {
				time.Sleep(300 * time.Millisecond) // a few periodic flushes
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				out.WriteString(lines.Text() + "\n")
			}
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			var werr error
			select {
			case werr = <-waited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the program did not end after SIGTERM; output:\n%s", out.String())
			}

			var ee *exec.ExitError
			switch {
			case mode != "none":
				if werr != nil || out.String() != "9900\nready\ngraceful exit\n" {
					t.Errorf("exit %v, output:\n%s\nstderr:\n%s\nwant a graceful exit after one signal", werr, out.String(), stderr.String())
				}
			case !errors.As(werr, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM:
				t.Errorf("exit %v, output:\n%s\nwant death by SIGTERM", werr, out.String())
			}
			if n := itest.CountRecords(t, trace); n < 100 {
				t.Errorf("%d records in the trace; want the 100 Step calls at least", n)
			}
		})
	}
}
