package app

import (
	"context"
	"net/http"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
)

// Joining the callers' traces (Config.TraceContext, petclinic -trace-context).
//
// A service behind OpenTelemetry's otelhttp middleware lets tigris's method
// spans join each request's trace with one line,
// monitor.JoinOpenTelemetry(trace.SpanContextFromContext, ...), which hands
// tigris the span context the middleware put in the request's context
// (docs/export.md, "Joining the service's traces"). PetClinic links no
// OpenTelemetry, so its option does the same for W3C traceparent headers: a
// middleware puts the caller's position in the request's context, and the
// same line, with accessors of tracecontext.Parent, reads it there. The
// service methods, the example's trace roots, take the request's context,
// not the request, so the header alone would not reach them.

// parentKey is the context key of the caller's position.
type parentKey struct{}

// withTraceContext passes the position of a request's traceparent header
// (exactly one, valid) in its context to h.
func withTraceContext(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values("Traceparent"); len(v) == 1 {
			if p, ok := tracecontext.Parse(v[0]); ok {
				r = r.WithContext(context.WithValue(r.Context(), parentKey{}, p))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// parentOf is the caller's position withTraceContext put in ctx; the zero
// Parent (invalid: it joins nothing) if none.
func parentOf(ctx context.Context) tracecontext.Parent {
	p, _ := ctx.Value(parentKey{}).(tracecontext.Parent)
	return p
}

// joinTraceContext is the bridge line: tigris reads a trace root's
// position from its context.Context parameter through parentOf. It changes
// nothing in a build without tigris.
func joinTraceContext() {
	monitor.JoinOpenTelemetry(parentOf,
		func(p tracecontext.Parent) [16]byte { return p.TraceID },
		func(p tracecontext.Parent) [8]byte { return p.SpanID },
		func(p tracecontext.Parent) byte { return p.Flags })
}
