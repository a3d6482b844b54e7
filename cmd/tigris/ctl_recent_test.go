package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/writer"
)

func TestCtlAuth(t *testing.T) {
	addr := admintest.Server(t, "tok")
	out, err := runCtl(t, "--addr", addr, "auth")
	if err == nil {
		t.Fatalf("auth without the token succeeded:\n%s", out)
	}
	wantLines(t, err.Error(), `missing bearer token.*pass --token`)
	wantLines(t, mustCtl(t, "--addr", addr, "--token", "tok", "auth"), `^authorized: the program has a token`)
}

func TestCtlWriterRecent(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.tgr")
	w, err := writer.NewSync(writer.Options{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "a.F()"})
	for i := range 10 {
		w.Write(&writer.Record{Probe: 1, Trace: uint64(i + 1), TIn: int64(i), TOut: int64(i + 1)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == admin.Prefix+"health" { // which program: ctl's header
			rw.Write([]byte(`{"status":"ok","pid":1,"binary":"/srv/app"}`))
			return
		}
		if r.URL.Path != admin.Prefix+"writer/recent" || r.URL.Query().Get("bytes") != "1000" {
			http.NotFound(rw, r)
			return
		}
		rw.Write(data)
	}))
	defer srv.Close()
	file := filepath.Join(dir, "r.tgr")
	wantLines(t, mustCtl(t, "--addr", srv.URL, "writer", "recent", "--bytes", "1000", "-o", file), `^wrote .*r\.tgr \(\d+ B\)$`)
	if got, err := os.ReadFile(file); err != nil || string(got) != string(data) {
		t.Errorf("the file holds %d bytes (%v), want the %d served", len(got), err, len(data))
	}
	if out, err := runCtl(t, "--addr", srv.URL, "--json", "writer", "recent"); err == nil {
		t.Errorf("writer recent --json succeeded:\n%s", out)
	}
}
