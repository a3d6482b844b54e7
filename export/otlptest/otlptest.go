package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Receiver is an OTLP/HTTP receiver. While Status is set (non-zero) it
// answers every request with that status instead. Its methods are safe for
// concurrent use.
type Receiver struct {
	// URL is the base URL: requests go to URL/v1/traces and URL/v1/metrics.
	URL    string
	Status atomic.Int32

	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	spans     map[string]*tracepb.Span
	resources map[string]map[string]string // span key → resource attributes
	dups      int
	requests  int
	refused   int
	metrics   []*metricspb.MetricsData
}

// New starts a Receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{t: t, spans: map[string]*tracepb.Span{}, resources: map[string]map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	t.Cleanup(r.srv.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if s := r.Status.Load(); s != 0 {
		r.mu.Lock()
		r.refused++
		r.mu.Unlock()
		w.WriteHeader(int(s))
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not protobuf", 415)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	switch req.URL.Path {
	case "/v1/traces":
		var m tracepb.TracesData // ExportTraceServiceRequest on the wire
		if err := proto.Unmarshal(b, &m); err != nil {
			r.t.Errorf("receiver: bad trace request: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		for _, rs := range m.ResourceSpans {
			res := Attrs(rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					k := Key(sp.TraceId, sp.SpanId)
					if _, ok := r.spans[k]; ok {
						r.dups++
					}
					r.spans[k] = sp
					r.resources[k] = res
				}
			}
		}
		// An empty ExportTraceServiceResponse: no partial success.
		w.Header().Set("Content-Type", "application/x-protobuf")
	case "/v1/metrics":
		var m metricspb.MetricsData // ExportMetricsServiceRequest on the wire
		if err := proto.Unmarshal(b, &m); err != nil {
			r.t.Errorf("receiver: bad metrics request: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		r.metrics = append(r.metrics, &m)
		w.Header().Set("Content-Type", "application/x-protobuf")
	default:
		http.NotFound(w, req)
	}
}

// Count returns the spans received (distinct ids) and how many arrived again.
func (r *Receiver) Count() (spans, dups int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans), r.dups
}

// Span is a received span and its resource's attributes.
type Span struct {
	*tracepb.Span
	Resource map[string]string
}

// Spans returns the spans received, by Key.
func (r *Receiver) Spans() map[string]Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Span, len(r.spans))
	for k, sp := range r.spans {
		out[k] = Span{Span: sp, Resource: r.resources[k]}
	}
	return out
}

// Metrics returns the metric requests received, oldest first.
func (r *Receiver) Metrics() []*metricspb.MetricsData {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*metricspb.MetricsData(nil), r.metrics...)
}

// Requests returns the requests decoded and the requests refused (Status).
func (r *Receiver) Requests() (decoded, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, r.refused
}

// Key is the key of a span in Spans: its trace id and span id in hex.
func Key(trace, span []byte) string {
	return hex.EncodeToString(trace) + "/" + hex.EncodeToString(span)
}

// Attrs flattens attributes to strings (ints in decimal).
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		}
	}
	return m
}
