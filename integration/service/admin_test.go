package service

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// adminFiles is a program that calls loop.Tick every millisecond until it is
// stopped (or two minutes pass, should the test die without stopping it).
var adminFiles = map[string]string{
	// The instrumented tests' config, with the admin endpoint linked (the
	// test starts it with TIGRIS_ADMIN).
	"tigris.yaml": itest.ShopConfig + "admin:\n  link: true\n",
	"loop/loop.go": `package loop

// Tick does a little work.
func Tick(i int) int { return i * 2 }
`,
	"main.go": `package main

import (
	"fmt"
	"time"

	"example.com/itest/loop"
)

func main() {
	fmt.Println("running")
	sum := 0
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		sum += loop.Tick(sum % 7)
		time.Sleep(time.Millisecond)
	}
}
`,
}

// syncBuffer is a bytes.Buffer the program's output goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAdminEndpoint starts an instrumented program with TIGRIS_ADMIN, switches
// loop.Tick to fine with tigris ctl, sees the writer write records, switches it
// off, sees the records stop, and stops the program.
func TestAdminEndpoint(t *testing.T) {
	dir := itest.NewModule(t, adminFiles)
	bin := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the program binds it next; another process taking it first is unlikely

	trace := filepath.Join(dir, "trace.tgr")
	var out syncBuffer
	prog := exec.Command(bin)
	prog.Dir = dir
	prog.Env = itest.Env("TIGRIS_ADMIN="+addr, "TIGRIS_OUT="+trace, "TIGRIS_FLUSH=100ms")
	prog.Stdout, prog.Stderr = &out, &out
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when the program has exited
	var waitErr error
	go func() { waitErr = prog.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			prog.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("program output:\n%s", out.String())
		}
	}()

	ctl := func(args ...string) (string, int) {
		return itest.Run(t, dir, nil, itest.TigrisBin, append([]string{"ctl", "--addr", addr}, args...)...)
	}
	mustCtl := func(args ...string) string {
		t.Helper()
		s, code := ctl(args...)
		if code != 0 {
			t.Fatalf("tigris ctl %s: exit status %d\n%s", strings.Join(args, " "), code, s)
		}
		return s
	}
	written := func() uint64 {
		t.Helper()
		var w struct{ Written, Dropped uint64 }
		reply := mustCtl("writer", "--json")
		if strings.HasPrefix(reply, "# ") { // the line naming the program, on stderr
			_, reply, _ = strings.Cut(reply, "\n")
		}
		if err := json.Unmarshal([]byte(reply), &w); err != nil {
			t.Fatal(err)
		}
		if w.Dropped != 0 {
			t.Errorf("the writer dropped %d records", w.Dropped)
		}
		return w.Written
	}
	// waitFor polls cond for up to 20 s.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			select {
			case <-exited:
				t.Fatalf("the program exited (%v) while waiting for %s", waitErr, what)
			default:
			}
		}
	}

	waitFor("the admin endpoint", func() bool { _, code := ctl("health"); return code == 0 })
	if want := "tigris: admin endpoint on http://" + addr + "/tigris/v1/\n"; !strings.Contains(out.String(), want) {
		t.Errorf("program output lacks %q:\n%s", want, out.String())
	}
	const tick = "execution(* example.com/itest/loop.Tick(..))"
	if s := mustCtl("probes", "--match", tick); !strings.Contains(s, "coarse  example.com/itest/loop.Tick(int) int") {
		t.Fatalf("probes --match Tick:\n%s", s)
	}

	// A bad pattern is refused with its column and changes nothing.
	if s, code := ctl("rules", "add", "execution(* example.com/itest/loop.Tick(..)"); code == 0 || !strings.Contains(s, "pattern: 1:44:") {
		t.Errorf("bad pattern: exit %d\n%s", code, s)
	}

	// Fine: records appear.
	mustCtl("rules", "add", tick, "--mode", "fine")
	if s := mustCtl("probes", "--match", tick, "--mode", "fine"); !strings.Contains(s, "loop.Tick") {
		t.Fatalf("Tick is not fine after rules add:\n%s", s)
	}
	waitFor("fine records to be written", func() bool { return written() >= 50 })

	// Off: records stop (after what was queued is flushed).
	mustCtl("rules", "add", tick, "--mode", "off")
	time.Sleep(500 * time.Millisecond) // > TIGRIS_FLUSH: the queue drains
	before := written()
	time.Sleep(time.Second) // a thousand ticks
	if after := written(); after != before {
		t.Errorf("records still written after switching off: %d → %d", before, after)
	}
	if s := mustCtl("stats", "--match", tick); !strings.Contains(s, " off ") {
		t.Errorf("stats after switching off:\n%s", s)
	}
	if fi, err := os.Stat(trace); err != nil || fi.Size() == 0 {
		t.Errorf("trace file: %v", err)
	}

	// Stop: SIGINT flushes and ends the program as the signal would.
	stop := prog.Process.Signal
	if runtime.GOOS == "windows" {
		stop = func(os.Signal) error { return prog.Process.Kill() } // no SIGINT to send
	}
	if err := stop(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not stop on SIGINT")
	}
	if _, code := ctl("health"); code == 0 {
		t.Error("the endpoint still answers after the program stopped")
	}
}
