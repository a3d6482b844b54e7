package app

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
)

// TestWithTraceContext: the handler's context carries the position of the
// request's one valid traceparent header, and nothing for no header, two
// headers or an invalid one.
func TestWithTraceContext(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	want, _ := tracecontext.Parse(tp)
	var got tracecontext.Parent
	h := withTraceContext(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = parentOf(r.Context()) }))
	for _, c := range []struct {
		name    string
		headers []string
		want    tracecontext.Parent
	}{
		{"one", []string{tp}, want},
		{"none", nil, tracecontext.Parent{}},
		{"two", []string{tp, tp}, tracecontext.Parent{}},
		{"invalid", []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}, tracecontext.Parent{}},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/vets", nil)
		for _, v := range c.headers {
			r.Header.Add("traceparent", v)
		}
		got = tracecontext.Parent{Flags: 0xff}
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != c.want {
			t.Errorf("%s: the handler's context has %+v, want %+v", c.name, got, c.want)
		}
	}
}
