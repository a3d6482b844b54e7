package dash

import (
	"context"
	"html"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestRequestTraces: a call tree that joined a request's trace shows its W3C
// trace id, in the list and over the tree drawn; ?trace= takes that id (in
// either case) and draws the tree, and an id no kept tree joined points to
// the query box.
func TestRequestTraces(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	p, _ := tracecontext.Parse("00-" + id + "-00f067aa0ba902b7-01")
	m := writer.Remote{Trace: 2, GID: 8, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: 2000}
	recs := append([]writer.Record{m.Record()}, shopRecords...)
	f, err := OpenFile(writeTrace(t, shopDefs, recs), FileOptions{Analysis: settings.Default().Analysis})
	if err != nil {
		t.Fatal(err)
	}
	v := f.View(context.Background(), Query{})
	if !v.Traces.Joined || v.Traces.Shown == nil || v.Traces.Shown.ID != 1 || v.Traces.Shown.TraceID != "" {
		t.Fatalf("traces: joined %v, shown %+v", v.Traces.Joined, v.Traces.Shown)
	}
	for _, r := range v.Traces.List {
		if want := map[bool]string{true: id}[r.ID == 2]; r.TraceID != want {
			t.Errorf("trace %d: request trace %q, want %q", r.ID, r.TraceID, want)
		}
	}
	srv := NewServer(f, &fakeAddr{}, Options{})
	for _, c := range []struct{ query, want string }{
		{"?trace=" + id, "request trace <code>" + id + "</code>"},
		{"?trace=" + strings.ToUpper(id), "request trace <code>" + id + "</code>"},
		{"?trace=0af7651916cd43dd8448eb211c80319c", "No call tree kept here joined the request trace <code>0af7651916cd43dd8448eb211c80319c</code>"},
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", "/"+c.query, nil))
		if page := html.UnescapeString(rec.Body.String()); rec.Code != 200 || !strings.Contains(page, c.want) {
			t.Errorf("GET /%s: %d, the page lacks %q", c.query, rec.Code, c.want)
		}
	}
	if q := parseQuery(map[string][]string{"trace": {strings.ToUpper(id)}}); q.TraceID != id || queryURL(q) != "/?trace="+id {
		t.Errorf("?trace=%s read as %+v, written %s", strings.ToUpper(id), q, queryURL(q))
	}
}
