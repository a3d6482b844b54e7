package export

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/tigrisgo/tigris/export/otlptest"
)

// front is a receiver in front of an otlptest.Receiver: reply decides, per
// trace request, whether it answers itself (status != 0) or passes the
// request on.
func front(t *testing.T, r *otlptest.Receiver, reply func(n int, spans int) (status int, header http.Header, body []byte)) string {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m tracepb.TracesData
		proto.Unmarshal(b, &m)
		spans := 0
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans += len(ss.Spans)
			}
		}
		mu.Lock()
		n++
		status, header, body := reply(n, spans)
		mu.Unlock()
		if status != 0 {
			for k, v := range header {
				w.Header()[k] = v
			}
			w.WriteHeader(status)
			w.Write(body)
			return
		}
		resp, err := http.Post(r.URL+req.URL.Path, req.Header.Get("Content-Type"), bytes.NewReader(b))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func onceOptions(t *testing.T, endpoint string, records int) (Options, int) {
	dir := t.TempDir()
	calls := simulate(rand.New(rand.NewPCG(uint64(records), 3)), 2, records, false)
	simFile(t, filepath.Join(dir, "app.tgr"), calls, 0, 1, nil)
	o := testOptions(nil, dir)
	o.Endpoint, o.Once, o.Checkpoint = endpoint, true, ""
	return o, len(calls)
}

// TestTooLarge: a receiver that takes at most 40 spans a request answers
// 413 to larger ones; the shipper halves them until they fit, and nothing
// is lost or repeated. A single span it refuses is counted as not
// delivered.
func TestTooLarge(t *testing.T) {
	r := otlptest.New(t)
	url := front(t, r, func(_, spans int) (int, http.Header, []byte) {
		if spans > 40 {
			return http.StatusRequestEntityTooLarge, nil, nil
		}
		return 0, nil, nil
	})
	o, n := onceOptions(t, url, 300)
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, dups := r.Count(); got != n || dups != 0 || st.SpansSent != int64(n) || st.SpansFailed != 0 {
		t.Errorf("%d spans (%d twice) for %d records; stats %+v", got, dups, n, st)
	}

	none := front(t, r, func(int, int) (int, http.Header, []byte) { return http.StatusRequestEntityTooLarge, nil, nil })
	o, n = onceOptions(t, none, 20)
	if st, err = Run(context.Background(), o); err != nil || st.SpansFailed != int64(n) || st.SpansPending != 0 {
		t.Errorf("every span too large: %v, stats %+v for %d records", err, st, n)
	}
}

// TestPartialSuccess: spans a reply's partial_success rejects are counted
// as not delivered, the rest as sent.
func TestPartialSuccess(t *testing.T) {
	r := otlptest.New(t)
	reply := partialSuccessReply(3, "3 spans too old")
	url := front(t, r, func(n, _ int) (int, http.Header, []byte) {
		if n == 1 {
			return http.StatusOK, http.Header{"Content-Type": {"application/x-protobuf"}}, reply
		}
		return 0, nil, nil
	})
	o, n := onceOptions(t, url, 200)
	o.BatchSpans = 50
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if st.SpansFailed != 3 || st.SpansSent != int64(n-3) {
		t.Errorf("stats %+v for %d records: want 3 not delivered", st, n)
	}
}

// TestRetryAfter: a 503 with Retry-After is retried no sooner than it says
// (less the jitter), and a final status (401) is not retried.
func TestRetryAfter(t *testing.T) {
	r := otlptest.New(t)
	var times []time.Time
	url := front(t, r, func(n, _ int) (int, http.Header, []byte) {
		times = append(times, time.Now())
		if n == 1 {
			return http.StatusServiceUnavailable, http.Header{"Retry-After": {"1"}}, nil
		}
		return 0, nil, nil
	})
	o, n := onceOptions(t, url, 50)
	st, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) < 2 || st.SpansSent != int64(n) || st.Retries != 1 {
		t.Fatalf("%d requests, stats %+v", len(times), st)
	}
	if d := times[1].Sub(times[0]); d < 750*time.Millisecond {
		t.Errorf("retried after %s; Retry-After said 1s", d)
	}

	unauthorized := front(t, r, func(int, int) (int, http.Header, []byte) { return http.StatusUnauthorized, nil, []byte("bad token") })
	o, n = onceOptions(t, unauthorized, 30)
	if st, err = Run(context.Background(), o); err != nil || st.SpansFailed != int64(n) || st.Retries != 0 {
		t.Errorf("401: %v, stats %+v for %d records", err, st, n)
	}

	for v, want := range map[string]time.Duration{"": 0, "3": 3 * time.Second, " 7 ": 7 * time.Second, "-1": 0, "soon": 0} {
		if got := retryAfter(v); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
	if d := retryAfter(time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)); d < 28*time.Second || d > 30*time.Second {
		t.Errorf("Retry-After as a date 30s ahead: %s", d)
	}
}

// partialSuccessReply encodes ExportTraceServiceResponse{partial_success:
// {rejected_spans, error_message}} by the field numbers of
// opentelemetry/proto/collector/trace/v1/trace_service.proto.
func partialSuccessReply(rejected int64, msg string) []byte {
	ps := protowire.AppendTag(nil, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, uint64(rejected))
	ps = protowire.AppendTag(ps, 2, protowire.BytesType)
	ps = protowire.AppendString(ps, msg)
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(b, ps)
}

// TestPartialSuccessDecode: the reply's fields are found however they are
// ordered or repeated, unknown fields are skipped, and what is not protobuf
// is not read.
func TestPartialSuccessDecode(t *testing.T) {
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 9, protowire.VarintType), 7)
	for _, c := range []struct {
		name     string
		reply    []byte
		rejected int64
		msg      string
		ok       bool
	}{
		{"empty (full success)", nil, 0, "", true},
		{"partial", partialSuccessReply(3, "too old"), 3, "too old", true},
		{"unknown fields around", append(append(unknown, partialSuccessReply(5, "x")...), unknown...), 5, "x", true},
		{"merged twice", append(partialSuccessReply(1, "a"), partialSuccessReply(2, "b")...), 2, "b", true},
		{"text", []byte("Bad Gateway"), 0, "", false},
		{"truncated", partialSuccessReply(3, "too old")[:5], 0, "", false},
	} {
		rejected, msg, ok := partialSuccess(c.reply)
		if ok != c.ok || (ok && (rejected != c.rejected || msg != c.msg)) {
			t.Errorf("%s: %d, %q, %v; want %d, %q, %v", c.name, rejected, msg, ok, c.rejected, c.msg, c.ok)
		}
	}
}
