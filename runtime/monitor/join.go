package monitor

import (
	gocontext "context"
	"sync/atomic"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Traces that join the service's own.
//
// A service's requests mostly belong to traces already: an OpenTelemetry SDK
// with otelhttp or otelgrpc middleware, or a W3C traceparent header from the
// gateway in front of it. When the root call of a recorded tigris trace has
// a context.Context or *http.Request parameter, the generated prologue hands
// it to JoinContext or JoinRequest, which look for the request's position in
// that trace (its remote parent): the span context that OpenTelemetry keeps
// in the context, through the bridge the program sets with JoinOpenTelemetry,
// and otherwise the request's traceparent header. When one is found, a
// remote-parent item (writer.Remote) goes to the sink before the trace's
// records, and tigris export sends the trace's spans with that trace id, the
// root under that span (docs/export.md, "Joining the service's traces").
//
// Only a trace root that asks (Call.Joins: a recorded root, or under
// follow-parent any root that drew) looks: the off and coarse paths, and every
// call below a root, are as they were, and the lookup runs once per trace.
// Under follow-parent (settings.Runtime.FollowParent) a root with a remote
// parent takes the parent's sampled flag as its decision instead of its
// draw, so that the services of a trace agree about which requests are
// recorded in detail.

// spanContextOf reads an OpenTelemetry span context from a context.Context:
// the bridge JoinOpenTelemetry sets; nil until then.
var spanContextOf atomic.Pointer[func(gocontext.Context) (tracecontext.Parent, bool)]

// followParent is settings.Runtime.FollowParent.
var followParent atomic.Bool

// JoinOpenTelemetry lets tigris find the OpenTelemetry span context of a
// request in a context.Context. The runtime does not import OpenTelemetry
// (programs without it stay free of it), so the program hands it the API it
// already links, in one line:
//
//	monitor.JoinOpenTelemetry(trace.SpanContextFromContext, trace.SpanContext.TraceID, trace.SpanContext.SpanID, trace.SpanContext.TraceFlags)
//
// with go.opentelemetry.io/otel/trace imported as trace. Call it once, before
// requests are served (from main or an init function); later calls replace
// the bridge. It is safe for concurrent use.
func JoinOpenTelemetry[S any, T ~[16]byte, P ~[8]byte, F ~uint8](from func(gocontext.Context) S, traceID func(S) T, spanID func(S) P, flags func(S) F) {
	f := func(ctx gocontext.Context) (tracecontext.Parent, bool) {
		sc := from(ctx)
		p := tracecontext.Parent{TraceID: [16]byte(traceID(sc)), SpanID: [8]byte(spanID(sc)), Flags: byte(flags(sc))}
		return p, p.Valid()
	}
	spanContextOf.Store(&f)
}

// Joins reports whether the call is a trace root that looks for its remote
// parent: the generated prologue then calls JoinContext or JoinRequest. It
// inlines to a test of one bit.
func (c *Call) Joins() bool { return c.fine&flagJoin != 0 }

// JoinContext looks for the remote parent of a trace root in ctx, the
// function's context.Context parameter (nil is no context). The prologue
// calls it when Joins says so.
//
//go:noinline
func JoinContext(c *Call, ctx gocontext.Context) { c.join(unleaked(ctx), nil) }

// JoinRequest looks for the remote parent of a trace root in the request
// whose context is ctx and whose header is h (an *http.Request's Context()
// and Header): the context first, then the traceparent header. The prologue
// calls it when Joins says so and the request is not nil.
//
//go:noinline
func JoinRequest(c *Call, ctx gocontext.Context, h map[string][]string) {
	c.join(unleaked(ctx), *(*map[string][]string)(hide(unsafe.Pointer(&h))))
}

// unleaked returns ctx such that escape analysis does not see it flow on:
// join reads the context and the header and keeps nothing of them (the
// bridge copies the span context out, tracecontext.Parse copies the ids),
// and without this the parameters of every instrumented function that
// hands a context or a request to the join would leak their content, which
// changes what escapes in its callers (docs/compatibility.md).
func unleaked(ctx gocontext.Context) gocontext.Context {
	return *(*gocontext.Context)(hide(unsafe.Pointer(&ctx)))
}

// hide is the runtime's noescape: p through an integer, which escape
// analysis does not follow.
//
//go:noescape
//go:linkname hide runtime.noescape
func hide(p unsafe.Pointer) unsafe.Pointer

// join finds the remote parent: the OpenTelemetry span context of ctx, else
// h's traceparent. The context comes first: where both are present, the
// context holds the service's own span of the request (the middleware's
// server span, itself a child of the header's span), which the call runs
// under. go:norace: it touches the trace context.
//
//go:norace
func (c *Call) join(ctx gocontext.Context, h map[string][]string) {
	c.fine &^= flagJoin
	p, ok := remoteParent(ctx, h)
	if !ok {
		return
	}
	tc := c.ctx
	if followParent.Load() && tc.sampled != p.Sampled() {
		// The root drew (Start asks only such roots under follow-parent
		// unless they are recorded); the parent's decision replaces its
		// draw. The root's order index is 0 either way.
		tc.sampled = p.Sampled()
		if tc.sampled {
			c.fine |= flagSampled
			tc.eoi = 1
		} else {
			c.fine &^= flagSampled
			tc.eoi = 0
		}
	}
	if !tc.sampled {
		return
	}
	tc.remote, tc.remoteTrace = p.TraceID, tc.trace
	if s := currentSink(); s != nil {
		m := writer.Remote{Trace: tc.trace, GID: tc.goid, TraceID: p.TraceID, SpanID: p.SpanID, Flags: p.Flags, Time: c.t0}
		tc.rec = m.Record()
		s.Write(&tc.rec)
	}
	// The lookup is not the call's own time.
	c.t0 = ticksNow()
}

// remoteParent is the request's position in its trace: the span context of
// ctx, else h's traceparent (one value; several are invalid).
func remoteParent(ctx gocontext.Context, h map[string][]string) (tracecontext.Parent, bool) {
	if ctx != nil {
		if f := spanContextOf.Load(); f != nil {
			if p, ok := (*f)(ctx); ok {
				return p, true
			}
		}
	}
	if v := h["Traceparent"]; len(v) == 1 {
		return tracecontext.Parse(v[0])
	}
	return tracecontext.Parent{}, false
}

// remoteTraceID returns the W3C trace id the running trace of tc joined, if
// it joined one.
//
//go:norace
func (tc *traceCtx) remoteTraceID() ([16]byte, bool) {
	return tc.remote, tc.remoteTrace == tc.trace && tc.trace != 0
}
