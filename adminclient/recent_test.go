package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// recentServer serves GET writer/recent with a stream whose records of probe
// 2 have no definition, as when a probe was first recorded in the part of the
// file left out, and GET probes with probe 2's signature.
func recentServer(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "recent.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, Host: "h", PID: 7, Binary: "/app"})
	if err != nil {
		t.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "shop.example/shop.Ping()", File: "shop.go", Line: 12})
	for i := range 10 {
		w.Write(&writer.Record{Probe: uint32(1 + i%2), Trace: uint64(i + 1), GID: 1, TIn: int64(100 * i), TOut: int64(100*i + 50)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+admin.Prefix+"writer/recent", func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("bytes") != "4096" {
			http.Error(rw, "want bytes=4096", 400)
		}
		rw.Write(data)
	})
	mux.HandleFunc("GET "+admin.Prefix+"probes", func(rw http.ResponseWriter, r *http.Request) {
		json.NewEncoder(rw).Encode(admin.ProbeList{Probes: []monitor.ProbeStatus{
			{ID: 1, Signature: "shop.example/shop.Ping()"}, {ID: 2, Signature: "shop.example/shop.Save()", File: "shop.go", Line: 9},
		}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRecent: Recent completes the definition of probe 2 from GET probes,
// so every record names its function, and keeps the header.
func TestRecent(t *testing.T) {
	c := newClient(t, recentServer(t), Options{})
	data, err := c.Recent(context.Background(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	r := writer.NewReader(bytes.NewReader(data))
	sigs := map[uint32]string{}
	records := 0
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindHeader:
			if it.Header.PID != 7 || it.Header.Host != "h" {
				t.Errorf("header %+v, want the program's", it.Header)
			}
		case writer.KindProbe:
			sigs[it.Probe.ID] = it.Probe.Signature
		case writer.KindRecord:
			records++
			if sigs[it.Record.Probe] == "" {
				t.Errorf("record of probe %d has no definition", it.Record.Probe)
			}
		}
	}
	if records != 10 || sigs[2] != "shop.example/shop.Save()" {
		t.Errorf("%d records, probe 2 defined as %q", records, sigs[2])
	}
}

func TestAuth(t *testing.T) {
	ctx := context.Background()
	url := admintest.Server(t, "tok")
	if _, err := newClient(t, url, Options{}).Auth(ctx); !isStatus(err, 401) {
		t.Errorf("Auth without the token: %v, want a 401", err)
	}
	st, err := newClient(t, url, Options{Token: "tok"}).Auth(ctx)
	if err != nil || !st.Authorized || !st.TokenRequired {
		t.Errorf("Auth with the token: %v %+v", err, st)
	}
}

func isStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == status
}
