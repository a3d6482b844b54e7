package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// TestCtlNamesProgram: every ctl subcommand first names the program it talks
// to (binary, pid, address) in a header line: on standard output before a
// table, on standard error when standard output carries JSON or a trace
// file, which then stays as the program sent it.
func TestCtlNamesProgram(t *testing.T) {
	addr := admintest.Server(t, "")
	exe, _ := os.Executable()
	head := fmt.Sprintf("# %s (%s), pid %d, %s, up ", filepath.Base(exe), exe, os.Getpid(), runtime.Version())
	isHeader := func(line string) bool {
		return strings.HasPrefix(line, head) && strings.HasSuffix(line, ", at "+addr)
	}
	for _, args := range [][]string{
		{"probes"}, {"rules"}, {"rules", "add", "execution(* shop.example/shop.Ping(..))", "--mode", "off"}, {"rules", "delete", "0"},
		{"enable", "execution(* shop.example/shop.Save(..))"}, {"sampling"}, {"sampling", "set", "50%"},
		{"analysis"}, {"analysis", "history"}, {"stats"}, {"writer"}, {"health"}, {"metrics"}, {"auth"},
		{"queries"}, {"query", "--explain", "SELECT count(*) FROM calls"},
	} {
		name := strings.Join(args, " ")
		stdout, stderr, err := runCtlSplit(t, append([]string{"--addr", addr}, args...)...)
		first, _, _ := strings.Cut(stdout, "\n")
		if err != nil || !isHeader(first) || stderr != "" {
			t.Errorf("ctl %s: %v; the first line %q, want %s…, at %s; stderr %q", name, err, first, head, addr, stderr)
		}
		if args[0] == "metrics" {
			continue // text either way
		}
		stdout, stderr, err = runCtlSplit(t, append([]string{"--addr", addr, "--json"}, args...)...)
		if err != nil || !json.Valid([]byte(stdout)) || !isHeader(strings.TrimSuffix(stderr, "\n")) {
			t.Errorf("ctl --json %s: %v\nstdout (want JSON only) %q\nstderr (want the header) %q", name, err, stdout, stderr)
		}
	}
}

// TestCtlProgramUnknownOrNotAdmin: a program whose health reply does not
// name its binary (an older tigris) still works and is an "unknown program";
// an address that answers as another server is said to be no tigris admin
// endpoint, before any request of the subcommand.
func TestCtlProgramUnknownOrNotAdmin(t *testing.T) {
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case admin.Prefix + "health":
			fmt.Fprint(w, `{"status":"ok","pid":4242,"go":"go1.22.1","uptimeSeconds":3,"probes":1}`)
		case admin.Prefix + "probes":
			fmt.Fprint(w, `{"probes":[{"id":1,"signature":"a.F()","file":"a.go","line":3,"mode":"coarse"}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer old.Close()
	out := mustCtl(t, "--addr", old.URL, "probes")
	wantLines(t, out, `^# unknown program, pid 4242, go1\.22\.1, up 3s, at `+old.URL+`$`, `^1 +coarse +a\.F\(\) +a\.go:3$`)

	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != admin.Prefix+"health" {
			t.Errorf("ctl asked %s of a server that is no admin endpoint", r.URL.Path)
		}
		fmt.Fprint(w, "<html>a web server</html>")
	}))
	defer other.Close()
	out, err := runCtl(t, "--addr", other.URL, "rules", "add", "execution(* a.F(..))")
	want := other.URL + " answers, but it is not a tigris admin endpoint (GET /tigris/v1/health: the reply is not a tigris health reply)"
	if err == nil || !strings.HasPrefix(err.Error(), want) || out != "" {
		t.Errorf("ctl at a web server: %v\nwant %s…; printed %q", err, want, out)
	}
}
