package integration

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// unfinishedFiles is a program whose function is still running when it
// exits: Serve, on a goroutine of its own, waits forever in Wait. With
// "exit" another goroutine calls Stop, which calls os.Exit while main
// sleeps; with "return" main returns.
var unfinishedFiles = map[string]string{
	"tigris.yaml": itest.ShopConfig,
	"main.go": `package main

import (
	"fmt"
	"os"
	"time"

	"example.com/itest/work"
)

func main() {
	started := make(chan struct{})
	go work.Serve(started)
	<-started
	fmt.Println("serving")
	if os.Args[1] == "exit" {
		go work.Stop(3)
		time.Sleep(time.Minute)
	}
}
`,
	"work/work.go": `package work

import "os"

// Serve runs until the program ends.
func Serve(started chan struct{}) { Wait(started) }

// Wait says it started and blocks forever.
func Wait(started chan struct{}) {
	close(started)
	select {}
}

// Stop ends the program with code.
func Stop(code int) { os.Exit(code) }
`,
}

// TestUnfinishedAtExit: a call still running when the program exits is in
// the trace as an unfinished record, whether another goroutine calls
// os.Exit or main returns, in every run; tigris read marks it and tigris
// convert counts it apart from lost records.
func TestUnfinishedAtExit(t *testing.T) {
	dir := itest.NewModule(t, unfinishedFiles)
	bin := filepath.Join(dir, "unfinished"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")

	for _, c := range []struct {
		mode, code string
		// want: the unfinished calls, "function@ess"; finished: those that returned
		want, finished []string
	}{
		{"exit", "exit status 3", []string{"Serve@0", "Stop@0", "Wait@1", "main@0"}, nil},
		{"return", "", []string{"Serve@0", "Wait@1"}, []string{"main@0"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			for run := range 3 { // the issue saw the call vanish in 1 run of 3
				trace := filepath.Join(t.TempDir(), "trace.tgr")
				cmd := exec.Command(bin, c.mode)
				cmd.Env = itest.Env("TIGRIS_MODE=fine", "TIGRIS_FLUSH=1m", "TIGRIS_OUT="+trace)
				out, err := cmd.CombinedOutput()
				if code := errString(err); code != c.code || !strings.Contains(string(out), "serving") {
					t.Fatalf("run %d: %q, output:\n%s", run, code, out)
				}
				open, done := callsAtExit(t, trace)
				if !slices.Equal(open, c.want) || !slices.Equal(done, c.finished) {
					t.Errorf("run %d: unfinished %q, finished %q; want %q and %q", run, open, done, c.want, c.finished)
				}
			}
		})
	}

	trace := filepath.Join(t.TempDir(), "trace.tgr")
	cmd := exec.Command(bin, "exit")
	cmd.Env = itest.Env("TIGRIS_MODE=fine", "TIGRIS_OUT="+trace)
	if out, err := cmd.CombinedOutput(); errString(err) != "exit status 3" {
		t.Fatalf("%v:\n%s", err, out)
	}
	read := itest.Tigris(t, dir, nil, "read", trace)
	if !strings.Contains(read, "work.Wait(chan struct{}) [unfinished]") {
		t.Errorf("tigris read does not mark Wait unfinished:\n%s", read)
	}
	msg := itest.Tigris(t, dir, nil, "convert", "--to", "chrome", "-o", filepath.Join(t.TempDir(), "c.json"), trace)
	if !strings.Contains(msg, "0 lost, 4 unfinished") {
		t.Errorf("tigris convert said %q; want 0 lost, 4 unfinished", msg)
	}
}

// errString is err's text, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// callsAtExit reads a trace and returns the calls of package work and
// main.main, as "name@ess", sorted: the unfinished ones and the others.
func callsAtExit(t *testing.T, path string) (open, done []string) {
	t.Helper()
	itest.EachRecord(t, path, func(def *writer.ProbeDef, r *writer.Record) {
		if def == nil {
			t.Fatalf("record of undefined probe %d", r.Probe)
		}
		name := def.Name + "@" + strconv.Itoa(int(r.ESS))
		if r.Unfinished() {
			open = append(open, name)
		} else {
			done = append(done, name)
		}
	})
	slices.Sort(open)
	slices.Sort(done)
	return open, done
}
