package adminclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
)

// TestProgram: Program names the program behind the address (this test
// binary, by path and pid), an older program whose health reply has no binary
// is an unknown program, and an address that answers as something else is
// said to be no tigris admin endpoint.
func TestProgram(t *testing.T) {
	ctx := context.Background()
	addr := admintest.Server(t, "")
	p, err := newClient(t, addr, Options{Raw: failWriter{t}}).Program(ctx)
	if err != nil {
		t.Fatalf("Program: %v", err)
	}
	exe, _ := os.Executable()
	if p.PID != os.Getpid() || p.Binary != exe || p.Addr != addr || !strings.HasPrefix(p.Go, "go") {
		t.Errorf("Program = %+v; want pid %d, binary %s, address %s", p, os.Getpid(), exe, addr)
	}
	want := fmt.Sprintf("%s (%s), pid %d, %s, up ", filepath.Base(exe), exe, os.Getpid(), p.Go)
	if s := p.String(); !strings.HasPrefix(s, want) || !strings.HasSuffix(s, ", at "+addr) {
		t.Errorf("String() = %q; want %q…, at %s", s, want, addr)
	}

	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"status":"ok","pid":4242,"go":"go1.22.1","uptimeSeconds":61.2,"probes":5}`)
	}))
	defer old.Close()
	p, err = newClient(t, old.URL, Options{}).Program(ctx)
	if err != nil || p.String() != "unknown program, pid 4242, go1.22.1, up 1m1s, at "+old.URL {
		t.Errorf("a health reply without binary: %v, %v", p, err)
	}

	for name, h := range map[string]http.HandlerFunc{
		"404 Not Found":                          http.NotFound,
		"401 Unauthorized":                       func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
		"the reply is not a tigris health reply": func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `<html>hello</html>`) },
	} {
		srv := httptest.NewServer(h)
		_, err := newClient(t, srv.URL, Options{}).Program(ctx)
		var ne *NotAdminError
		want := srv.URL + " answers, but it is not a tigris admin endpoint (GET /tigris/v1/health: " + name + ")"
		if !errors.As(err, &ne) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant %s…", name, err, want)
		}
		srv.Close()
	}
}

// failWriter fails the test when written: Program must not pass its reply to
// Options.Raw.
type failWriter struct{ t *testing.T }

func (w failWriter) Write(p []byte) (int, error) {
	w.t.Errorf("Program wrote its reply to Options.Raw: %s", p)
	return len(p), nil
}
