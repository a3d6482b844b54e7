package service

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// queryFiles is a program whose work.Serve calls work.Lookup (fast) and
// work.Render (0 to 3 ms, failing on every seventh call) from four
// goroutines until it is stopped.
var queryFiles = map[string]string{
	"tigris.yaml": itest.ShopConfig + "admin:\n  link: true\n",
	"work/work.go": `package work

import (
	"errors"
	"time"
)

var errBad = errors.New("bad")

// Lookup is quick.
func Lookup(i int) int { return i * 3 }

// Render takes up to 3 ms and fails on every seventh call.
func Render(i int) error {
	time.Sleep(time.Duration(i/4%4) * time.Millisecond) // each goroutine's i is g mod 4
	if i%7 == 0 {
		return errBad
	}
	return nil
}

// Serve is one request.
func Serve(i int) error {
	Lookup(i)
	return Render(i)
}
`,
	"main.go": `package main

import (
	"fmt"
	"sync"
	"time"

	"example.com/itest/work"
)

func main() {
	fmt.Println("running")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i, end := g, time.Now().Add(2*time.Minute); time.Now().Before(end); i += 4 {
				work.Serve(i)
			}
		}(g)
	}
	wg.Wait()
}
`,
}

// TestQueryLiveAndTrace runs a query live with tigris ctl query while the
// program records the same probes in fine mode, then the same query with
// tigris query over the trace: every window the live query saw whole has the
// same rows in both.
func TestQueryLiveAndTrace(t *testing.T) {
	dir := itest.NewModule(t, queryFiles)
	bin := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	trace := filepath.Join(dir, "trace.tgr")
	var out syncBuffer
	prog := exec.Command(bin)
	prog.Dir = dir
	// Every call of package work fine and recorded: the trace holds them all.
	prog.Env = itest.Env("TIGRIS_ADMIN="+addr, "TIGRIS_OUT="+trace, "TIGRIS_FLUSH=100ms",
		"TIGRIS_RULES=fine:within(example.com/itest/work)", "TIGRIS_SAMPLING=100%")
	prog.Stdout, prog.Stderr = &out, &out
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { prog.Wait(); close(exited) }()
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
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, code := ctl("health"); code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no admin endpoint")
		}
	}

	const q = `SELECT name, count(*) AS calls, sum(duration) AS total, max(duration) AS longest, p50(duration) AS median
		FROM calls WHERE package = 'example.com/itest/work' AND name != 'Serve' AND (duration >= 1ms OR error)
		GROUP BY name WINDOW 1s`
	// The plan takes Lookup and Render, not Serve (name != 'Serve' is decided
	// per probe), and Render's bound is decided at its exit.
	if s, code := ctl("query", "--explain", "SELECT * FROM calls WHERE package = 'example.com/itest/work' AND name != 'Serve' AND duration >= 1ms"); code != 0 ||
		!strings.Contains(s, "source calls: 2 probe(s)") || !strings.Contains(s, "example.com/itest/work.Render  coarse, at exit: duration >= 1ms") || strings.Contains(s, "Serve  ") {
		t.Fatalf("explain: exit %d\n%s", code, s)
	}
	live, code := ctl("query", "--json", "--for", "4500ms", q)
	if code != 0 {
		t.Fatalf("ctl query: exit %d\n%s", code, live)
	}
	if err := prog.Process.Signal(os.Interrupt); err != nil || runtime.GOOS == "windows" {
		prog.Process.Kill()
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the program did not stop")
	}
	offline, code := itest.Run(t, dir, nil, itest.TigrisBin, "query", "--json", trace, q)
	if code != 0 {
		t.Fatalf("tigris query: exit %d\n%s", code, offline)
	}
	liveRows, offRows := windows(t, live), windows(t, offline)
	var starts []string
	for s := range liveRows {
		starts = append(starts, s)
	}
	sort.Strings(starts)
	if len(starts) < 4 {
		t.Fatalf("live windows %v: want at least 4 in 4.5 s\n%s", starts, live)
	}
	// The first and last windows were cut by the query's start and end.
	compared := 0
	for _, s := range starts[1 : len(starts)-1] {
		if !sameRows(liveRows[s], offRows[s]) {
			t.Errorf("window %s:\nlive:\n%s\ntrace:\n%s", s, strings.Join(liveRows[s], "\n"), strings.Join(offRows[s], "\n"))
		}
		compared++
	}
	if compared < 2 {
		t.Fatalf("compared %d windows", compared)
	}
}

// sameRows compares rows "name count total longest median": names and
// counts exactly, durations to a nanosecond per call. The program converts
// each call's clock readings to nanoseconds once for the live query and once
// for the trace file, with the clock's calibration of that moment, and the
// two roundings may differ by a nanosecond (docs/queries.md).
func sameRows(live, trace []string) bool {
	if len(live) != len(trace) {
		return false
	}
	for i := range live {
		a, b := strings.Fields(live[i]), strings.Fields(trace[i])
		if len(a) != len(b) || a[0] != b[0] || a[1] != b[1] {
			return false
		}
		n, _ := strconv.ParseInt(a[1], 10, 64)
		for j := 2; j < len(a); j++ {
			x, _ := strconv.ParseInt(a[j], 10, 64)
			y, _ := strconv.ParseInt(b[j], 10, 64)
			if d := x - y; d > n || -d > n {
				return false
			}
		}
	}
	return true
}

// windows groups the rows of a JSON-lines result by window start.
func windows(t *testing.T, out string) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line struct {
			Row    []json.RawMessage `json:"row"`
			Schema *int              `json:"schema"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Row == nil {
			continue
		}
		var start string
		json.Unmarshal(line.Row[0], &start)
		var cells []string
		for _, c := range line.Row[2:] {
			cells = append(cells, string(c))
		}
		m[start] = append(m[start], strings.Join(cells, " "))
	}
	return m
}
