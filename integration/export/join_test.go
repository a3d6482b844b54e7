package export

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// The OpenTelemetry modules of the joining program: the versions the
// Collector's build already fetched (otelcol_test.go), so the module cache
// usually has them.
const (
	otelVersion     = "v1.47.0"
	otelHTTPVersion = "v0.72.0"
)

// joinFiles is a module with one instrumented package, a handler and the
// store it asks, and two programs that serve it in-process and send it
// requests with traceparent headers, printing each header they sent (each
// program its own trace ids):
// cmd/otel wraps the handler in otelhttp, exports the SDK's spans over
// OTLP/HTTP and sets tigris's OpenTelemetry bridge; cmd/plain links no
// OpenTelemetry at all.
func joinFiles() map[string]string {
	client := `
func send(url string, first, n int) error {
	for i := first; i < first+n; i++ {
		tp := fmt.Sprintf("00-%016x%016x-%016x-01", 0x4bf92f3577b34da6+uint64(i), uint64(0xa3ce929d0e0e4736), 0x00f067aa0ba902b7+uint64(i))
		req, err := http.NewRequest("GET", url+"/find?key=k"+strconv.Itoa(i), nil)
		if err != nil {
			return err
		}
		req.Header.Set("traceparent", tp)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		fmt.Println("sent", tp)
	}
	return nil
}
`
	return map[string]string{
		"go.mod": fmt.Sprintf(`module example.com/itest

go %s

require (
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp %s
	go.opentelemetry.io/otel %s
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp %s
	go.opentelemetry.io/otel/sdk %s
	go.opentelemetry.io/otel/trace %s
)

%s`, itest.GoDirective, otelHTTPVersion, otelVersion, otelVersion, otelVersion, otelVersion, itest.RuntimeRequire()),
		"tigris.yaml": `version: 1
monitor:
  include: ["within(example.com/itest/shop)"]
  mode: fine
  sampling: 100%
`,
		"shop/shop.go": `package shop

import (
	"context"
	"fmt"
	"net/http"
)

type Store struct{}

func (s *Store) Find(ctx context.Context, key string) (int, error) {
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return len(key), nil
}

type Server struct{ Store *Store }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := s.Store.Find(r.Context(), r.URL.Query().Get("key"))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	fmt.Fprintln(w, n)
}
`,
		"cmd/otel/main.go": `package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"

	"example.com/itest/shop"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	monitor.JoinOpenTelemetry(trace.SpanContextFromContext, trace.SpanContext.TraceID, trace.SpanContext.SpanID, trace.SpanContext.TraceFlags)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx) // OTEL_EXPORTER_OTLP_ENDPOINT
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	srv := httptest.NewServer(otelhttp.NewHandler(&shop.Server{Store: &shop.Store{}}, "GET /find"))
	err = send(srv.URL, 0, 5)
	srv.Close()
	if err2 := tp.Shutdown(ctx); err == nil {
		err = err2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
` + client,
		"cmd/plain/main.go": `package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"

	"example.com/itest/shop"
)

func main() {
	srv := httptest.NewServer(&shop.Server{Store: &shop.Store{}})
	err := send(srv.URL, 100, 5)
	srv.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
` + client,
	}
}

var sentRE = regexp.MustCompile(`(?m)^sent 00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// sentParents are the trace and span ids of the traceparent headers a
// program printed.
func sentParents(t *testing.T, out string) (parents [][2]string) {
	t.Helper()
	for _, m := range sentRE.FindAllStringSubmatch(out, -1) {
		parents = append(parents, [2]string{m[1], m[2]})
	}
	if len(parents) != 5 {
		t.Fatalf("the program sent %d requests, want 5:\n%s", len(parents), out)
	}
	return parents
}

// spansOfTrace returns the spans the sink received with trace id tid (hex).
func spansOfTrace(sink *otlptest.Receiver, tid string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range sink.Spans() {
		if hex.EncodeToString(s.TraceId) == tid {
			out = append(out, s)
		}
	}
	return out
}

// TestCollectorJoinsRequestTraces: a program whose handler otelhttp wraps
// exports the SDK's spans to a real Collector, and tigris export sends
// tigris's spans of its trace file to the same Collector: every request's
// method spans carry the request's trace id, the handler's span nests under
// otelhttp's server span (the context's span, not the header's), and the
// store's under the handler's. A program without OpenTelemetry that gets a
// bare traceparent header puts the handler's span under the header's span.
func TestCollectorJoinsRequestTraces(t *testing.T) {
	collector(t)
	dir := itest.NewModule(t, joinFiles())
	itest.WriteRuntimeSum(t, dir)
	if out, code := itest.Run(t, dir, nil, itest.GoExe, "mod", "tidy"); code != 0 {
		skipUnreachable(t, "the OpenTelemetry modules", out)
		t.Fatalf("go mod tidy:\n%s", out)
	}
	otelBin := filepath.Join(dir, "otel"+itest.ExeSuffix())
	plainBin := filepath.Join(dir, "plain"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", otelBin, "./cmd/otel")
	itest.Tigris(t, dir, nil, "go", "build", "-o", plainBin, "./cmd/plain")

	sink := otlptest.New(t)
	addr := freeAddr(t)
	startCollector(t, collectorConfig(t, dir, addr, sink.URL), addr)
	traces := filepath.Join(dir, "traces")
	otelSent := sentParents(t, itest.RunProgram(t, otelBin, "TIGRIS_OUT="+filepath.Join(traces, "otel.tgr"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr, "OTEL_SERVICE_NAME=shop-otel"))
	plainSent := sentParents(t, itest.RunProgram(t, plainBin, "TIGRIS_OUT="+filepath.Join(traces, "plain.tgr")))
	itest.Tigris(t, dir, nil, "export", "--once", "--endpoint", "http://"+addr, "--checkpoint", "none", "--service-name", "shop", traces)

	// Per request of cmd/otel: otelhttp's server span, ServeHTTP and Find;
	// of cmd/plain: ServeHTTP and Find.
	want := 3*len(otelSent) + 2*len(plainSent)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if n, _ := sink.Count(); n >= want {
			break
		}
		if time.Now().After(deadline) {
			n, _ := sink.Count()
			t.Fatalf("%d spans arrived, want %d", n, want)
		}
	}
	named := func(spans []otlptest.Span, suffix string) *otlptest.Span {
		for i := range spans {
			if strings.HasSuffix(spans[i].Name, suffix) {
				return &spans[i]
			}
		}
		return nil
	}
	check := func(program string, sent [][2]string, otel bool) {
		for _, p := range sent {
			spans := spansOfTrace(sink, p[0])
			serve, find := named(spans, ".(*Server).ServeHTTP"), named(spans, ".(*Store).Find")
			if serve == nil || find == nil {
				t.Errorf("%s: trace %s has no ServeHTTP or Find span of tigris: %d spans", program, p[0], len(spans))
				continue
			}
			parent := p[1] // the header's span
			if otel {
				var server *otlptest.Span
				for i := range spans {
					if spans[i].Kind == tracepb.Span_SPAN_KIND_SERVER {
						server = &spans[i]
					}
				}
				if server == nil || hex.EncodeToString(server.ParentSpanId) != p[1] {
					t.Errorf("%s: trace %s: otelhttp's server span %v, want one under %s", program, p[0], server, p[1])
					continue
				}
				parent = hex.EncodeToString(server.SpanId)
			}
			if got := hex.EncodeToString(serve.ParentSpanId); got != parent {
				t.Errorf("%s: trace %s: ServeHTTP's parent %s, want %s", program, p[0], got, parent)
			}
			if string(find.ParentSpanId) != string(serve.SpanId) {
				t.Errorf("%s: trace %s: Find's parent %x, want ServeHTTP's %x", program, p[0], find.ParentSpanId, serve.SpanId)
			}
			if serve.Resource["service.name"] != "shop" {
				t.Errorf("%s: ServeHTTP's resource %v", program, serve.Resource)
			}
		}
	}
	check("cmd/otel", otelSent, true)
	check("cmd/plain", plainSent, false)
}
