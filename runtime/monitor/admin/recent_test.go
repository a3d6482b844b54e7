package admin

import (
	"bytes"
	"io"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestRecent writes fine records to a real file and reads them back through
// GET writer/recent: a trace stream with the header, Find's definition and
// the records, read without damage.
func TestRecent(t *testing.T) {
	reset(t)
	wantError(t, do(t, h, "GET", Prefix+"writer/recent?bytes=0", ""), 400, "bytes", 0, "not a byte count")
	wantError(t, do(t, h, "GET", Prefix+"writer/recent?bytes=99999999", ""), 400, "bytes", 0, "not a byte count")

	w, err := writer.NewSync(writer.Options{Path: t.TempDir() + "/recent.tgr", FlushInterval: 3600e9})
	if err != nil {
		t.Fatal(err)
	}
	old := monitor.SetSink(w)
	t.Cleanup(func() {
		monitor.SetSink(old)
		w.Close()
	})
	decode[RuleChange](t, do(t, h, "POST", Prefix+"rules", `{"pattern": "execution(* test.example/shop.(*Store).Find(..))", "mode": "fine"}`), 201)
	for i := 0; i < 50; i++ {
		call(find, nil)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rec := do(t, h, "GET", Prefix+"writer/recent", "")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("GET writer/recent: %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if rec.Header().Get("X-Tigris-File") == "" || rec.Header().Get("X-Tigris-Omitted-Bytes") != "0" {
		t.Errorf("headers %v", rec.Header())
	}
	r := writer.NewReader(bytes.NewReader(rec.Body.Bytes()))
	records, defined := 0, false
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindProbe:
			defined = defined || it.Probe.ID == find.ID()
		case writer.KindRecord:
			records++
		case writer.KindGap:
			t.Errorf("gap in the recent records: %+v", it.Gap)
		}
	}
	if records != 50 || !defined {
		t.Errorf("%d records (want 50), Find defined: %v", records, defined)
	}
}

// TestRecentWithoutWriter: the null writer has no file to read.
func TestRecentWithoutWriter(t *testing.T) {
	wantError(t, do(t, h, "GET", Prefix+"writer/recent", ""), 409, "", 0, "no trace file yet")
}

// TestAuthCheck: POST auth answers as a change would be answered, and changes
// nothing.
func TestAuthCheck(t *testing.T) {
	st := decode[AuthState](t, do(t, h, "POST", Prefix+"auth", ""), 200)
	if !st.Authorized || st.TokenRequired {
		t.Errorf("without a token: %+v", st)
	}
	th := NewHandler(Options{Token: "s3cret"})
	wantError(t, do(t, th, "POST", Prefix+"auth", ""), 401, "", 0, "missing bearer token")
	wantError(t, do(t, th, "POST", Prefix+"auth", "", "Authorization: Bearer nope"), 401, "", 0, "wrong bearer token")
	st = decode[AuthState](t, do(t, th, "POST", Prefix+"auth", "", "Authorization: Bearer s3cret"), 200)
	if !st.Authorized || !st.TokenRequired {
		t.Errorf("with the token: %+v", st)
	}
	wantError(t, do(t, th, "GET", Prefix+"auth", ""), 405, "", 0, "is not allowed")
}
