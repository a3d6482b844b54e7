package export

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

	colmetricspb "go.opentelemetry.io/proto/slim/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/slim/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/slim/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/slim/otlp/trace/v1"
)

// receiver is an OTLP/HTTP receiver for tests: it decodes every request with
// the generated types, keeps the spans by id and counts duplicates. While
// status is set it answers with that status instead.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	status atomic.Int32

	mu        sync.Mutex
	spans     map[string]*tracepb.Span
	resources map[string]map[string]string // span key → resource attributes
	dups      int
	requests  int
	refused   int
	metrics   []*colmetricspb.ExportMetricsServiceRequest
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{t: t, spans: map[string]*tracepb.Span{}, resources: map[string]map[string]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	if s := r.status.Load(); s != 0 {
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
		var m coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &m); err != nil {
			r.t.Errorf("receiver: bad trace request: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		for _, rs := range m.ResourceSpans {
			res := attrMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					k := spanKey(sp.TraceId, sp.SpanId)
					if _, ok := r.spans[k]; ok {
						r.dups++
					}
					r.spans[k] = sp
					r.resources[k] = res
				}
			}
		}
		reply, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(reply)
	case "/v1/metrics":
		var m colmetricspb.ExportMetricsServiceRequest
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

func (r *receiver) count() (spans, dups int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans), r.dups
}

func spanKey(trace, span []byte) string {
	return hex.EncodeToString(trace) + "/" + hex.EncodeToString(span)
}

// attrMap flattens attributes to strings (ints in decimal).
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
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
