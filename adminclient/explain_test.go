package adminclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// Explain posts the query: one of 40 KB is explained by a server whose
// headers stop at 16 KiB (the admin endpoint's), on a program with a token
// as well; an error's message does not echo the request's URL.
func TestExplainLongQuery(t *testing.T) {
	srv := httptest.NewUnstartedServer(admin.NewHandler(admin.Options{Token: "s3cret"}))
	srv.Config.MaxHeaderBytes = 16 << 10
	srv.Start()
	defer srv.Close()
	text := "SELECT 1" + strings.Repeat("+1", 20000) + " AS x FROM calls"
	p, err := newClient(t, srv.URL, Options{Token: "s3cret"}).Explain(context.Background(), text)
	if err != nil || len(p.Statements) != 1 || p.Statements[0].Kind != "explain" {
		t.Fatalf("%.300v %v", p, err)
	}
	_, err = newClient(t, srv.URL, Options{}).Explain(context.Background(), text)
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusUnauthorized {
		t.Fatalf("without the token: %v", err)
	}
	// What the URL way did: 431, and now a message without the query.
	_, err = call[admin.QueryPosted](context.Background(), newClient(t, srv.URL, Options{Token: "s3cret"}), http.MethodGet, admin.Prefix+"queries/explain?query="+strings.Repeat("1", 40000), nil, "")
	if !errors.As(err, &e) || e.Status != http.StatusRequestHeaderFieldsTooLarge || len(err.Error()) > 200 {
		t.Fatalf("%.300v", err)
	}
}

// A program of an earlier version explains only on GET: the client asks
// again on GET when the POST gets 405.
func TestExplainFallsBackToGet(t *testing.T) {
	h := admin.NewHandler(admin.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/queries/explain") {
			w.Header().Set("Allow", "GET")
			http.Error(w, `{"error":"POST is not allowed"}`, http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p, err := newClient(t, srv.URL, Options{}).Explain(context.Background(), "SELECT count(*) FROM calls")
	if err != nil || len(p.Statements) != 1 {
		t.Fatalf("%v %v", p, err)
	}
}
