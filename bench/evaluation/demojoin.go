package evaluation

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/tigrisgo/tigris/export"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// The demo's requests join their traces (tigris demo --export).
//
// A real service's requests arrive inside traces: an OpenTelemetry SDK's
// middleware or a gateway sends a W3C traceparent. In the demo the simulated
// users play that caller: every request carries a traceparent of a trace of
// its own, whose parent is the user's client span, and PetClinic runs with
// -trace-context, so that a trace tigris records joins it (docs/export.md,
// "Joining the service's traces"). The demo sends the client spans of the
// requests whose trace tigris recorded as the service petclinic-load, beside
// tigris export's spans of petclinic: in Jaeger or Tempo each such request is
// one trace, the user's client span with tigris's method spans under it.
// PetClinic takes the bare header rather than OpenTelemetry's SDK, which would
// add its SDK and an OTLP exporter to the example's build.

// maxClientSpans bounds the client spans the demo keeps, the latest: a trace
// recorded at 10 % sampling finds its request's span among them.
const maxClientSpans = 1 << 16

// clientSpan is one request of the simulated users.
type clientSpan struct {
	parent     tracecontext.Parent // the request's traceparent: the client span's position
	endpoint   string              // "GET /api/owners/{id}"
	start, end time.Time
	status     int
}

// clientSpans are the latest requests, by W3C trace id. Safe for
// concurrent use.
type clientSpans struct {
	mu      sync.Mutex
	byTrace map[[16]byte]*clientSpan
	order   [][16]byte // the traces of byTrace, oldest first
}

// trace is loadgen.Options.Trace: it gives req a traceparent of a new
// trace, sampled, and keeps the request's span once answered.
func (c *clientSpans) trace(req *http.Request, endpoint string) func(status int) {
	s := &clientSpan{endpoint: endpoint, parent: tracecontext.Parent{Flags: tracecontext.FlagSampled}}
	rand.Read(s.parent.TraceID[:])
	rand.Read(s.parent.SpanID[:])
	if !s.parent.Valid() {
		return nil // all zeros: 2^-64
	}
	req.Header.Set("Traceparent", s.parent.String())
	s.start = time.Now()
	return func(status int) {
		s.end, s.status = time.Now(), status
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.byTrace == nil {
			c.byTrace = make(map[[16]byte]*clientSpan)
		}
		c.byTrace[s.parent.TraceID] = s
		c.order = append(c.order, s.parent.TraceID)
		if len(c.order) > maxClientSpans {
			delete(c.byTrace, c.order[0])
			c.order = c.order[1:]
		}
	}
}

// of is the request of trace id, nil if not kept.
func (c *clientSpans) of(id [16]byte) *clientSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byTrace[id]
}

// joinedCall is one recorded call of a trace that joined a request's trace.
type joinedCall struct {
	name      string
	depth     uint32
	eoi       uint32
	tin, tout int64
}

// joinedTraces reads the trace file at path and returns, for the requests
// in spans whose trace tigris recorded, their client spans (in the order the
// remote parents come), and the recorded calls of the one with the most,
// in call order (its W3C trace id is calls' request's).
func joinedTraces(path string, spans *clientSpans) (joined []*clientSpan, top *clientSpan, calls []joinedCall, err error) {
	r, _, err := traceconv.Open([]string{path})
	if err != nil {
		return nil, nil, nil, err
	}
	defer r.Close()
	names := map[uint32]string{}
	remote := map[uint64]*clientSpan{} // tigris trace → its request
	byTrace := map[uint64][]joinedCall{}
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		switch it.Kind {
		case writer.KindProbe:
			names[it.Probe.ID] = export.FunctionName(it.Probe.Signature)
		case writer.KindRemote:
			if s := spans.of(it.Remote.TraceID); s != nil && remote[it.Remote.Trace] == nil {
				remote[it.Remote.Trace] = s
				joined = append(joined, s)
			}
		case writer.KindRecord:
			rec := &it.Record
			if remote[rec.Trace] != nil {
				byTrace[rec.Trace] = append(byTrace[rec.Trace], joinedCall{name: names[rec.Probe], depth: rec.ESS, eoi: rec.EOI, tin: rec.TIn, tout: rec.TOut})
			}
		}
	}
	var best uint64
	for tr, cs := range byTrace {
		if len(cs) > len(calls) || len(cs) == len(calls) && tr < best {
			best, calls = tr, cs
		}
	}
	slices.SortFunc(calls, func(a, b joinedCall) int { return int(a.eoi) - int(b.eoi) })
	return joined, remote[best], calls, nil
}

// printJoinedTrace shows one request's trace as a tracing backend shows it:
// the user's client span, tigris's method spans under it.
func printJoinedTrace(stdout io.Writer, joined int, top *clientSpan, calls []joinedCall) {
	say := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	say("== 6. One request's trace in the Collector: both kinds of spans")
	if top == nil {
		say("   no recorded trace joined a request's trace (tigris records a sample of the traces; run longer)")
		return
	}
	say("   %d requests' traces have tigris's method spans; the one with the most:", joined)
	say("   trace %s (search for it in Jaeger or Tempo)", tracecontext.FormatTraceID(top.parent.TraceID))
	say("     %-8s %s  [petclinic-load, client span %x, status %d]", human.Duration(top.end.Sub(top.start)), top.endpoint, top.parent.SpanID, top.status)
	for i, c := range calls {
		if i == 12 {
			say("     … and %d more calls", len(calls)-i)
			break
		}
		say("     %-8s %s%s  [petclinic, tigris]", human.Duration(time.Duration(c.tout-c.tin)), strings.Repeat("  ", int(c.depth)+1), shortSig(c.name))
	}
}

// sendClientSpans sends the client spans of the requests whose traces
// joined to the OTLP/HTTP endpoint, as the service petclinic-load.
func sendClientSpans(ctx context.Context, endpoint string, spans []*clientSpan) error {
	const batch = 1000
	for len(spans) > 0 {
		n := min(batch, len(spans))
		b, err := proto.Marshal(clientSpansRequest(spans[:n]))
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(endpoint, "/")+"/v1/traces", bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("sending the client spans to %s: %s", endpoint, resp.Status)
		}
		spans = spans[n:]
	}
	return nil
}

// clientSpansRequest is the OTLP request of spans: client spans named by
// method and route, as OpenTelemetry's HTTP conventions name them. It is a
// TracesData, the same message on the wire as ExportTraceServiceRequest,
// whose package would link gRPC into tigris.
func clientSpansRequest(spans []*clientSpan) *tracepb.TracesData {
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	out := make([]*tracepb.Span, 0, len(spans))
	for _, s := range spans {
		method, route, _ := strings.Cut(s.endpoint, " ")
		sp := &tracepb.Span{
			TraceId: s.parent.TraceID[:], SpanId: s.parent.SpanID[:], Name: s.endpoint,
			Kind:              tracepb.Span_SPAN_KIND_CLIENT,
			StartTimeUnixNano: uint64(s.start.UnixNano()), EndTimeUnixNano: uint64(s.end.UnixNano()),
			Attributes: []*commonpb.KeyValue{
				str("http.request.method", method), str("url.template", route),
				{Key: "http.response.status_code", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(s.status)}}},
			},
		}
		if s.status == 0 || s.status >= 400 {
			sp.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR}
		}
		out = append(out, sp)
	}
	return &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", "petclinic-load")}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "github.com/tigrisgo/tigris/bench/evaluation"}, Spans: out}},
	}}}
}
