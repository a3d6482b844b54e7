package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Prefix is the path under which the versioned API lives.
const Prefix = "/tigris/v1/"

// MaxBody is the largest request body accepted; a larger one gets 413. The
// largest real body, a PUT rules with many long patterns, is far smaller.
const MaxBody = 1 << 20

// maxInFlight bounds how many requests run their handler at once. Handlers are
// short, but a stats snapshot over many probes costs CPU the host program would
// rather have; more concurrent clients wait their turn. A slot is held only while
// the handler runs: the request body is read before and the reply written after
// (see wrap), so a slow client cannot hold one. GET health takes no slot.
const maxInFlight = 4

// Per-request deadlines, measured from when the body starts being read and from
// when the reply starts being written. They bound how long a slow or stalled
// client keeps its connection (and a goroutine and a buffer); the server's own
// timeouts (server.go) stay as an outer bound. Variables for tests.
var (
	bodyTimeout  = 5 * time.Second
	replyTimeout = 10 * time.Second
)

// maxBodyReads bounds the requests receiving a body at once (each may buffer up
// to MaxBody bytes); one more gets 503 at once.
const maxBodyReads = 16

// Options configure NewHandler.
type Options struct {
	// Token, when not empty, is the bearer token mutating requests (POST, PUT,
	// DELETE) must present: "Authorization: Bearer <token>".
	Token string
}

// api serves the endpoints over the monitor's public API.
type api struct {
	tokenSum [sha256.Size]byte // sha256 of the token, so the compare does not leak its length
	hasToken bool
	// mu serialises mutating requests, so a read-then-change inside one request
	// (delete rule i and report it) is atomic with respect to other clients.
	mu      sync.Mutex
	slots   chan struct{}
	readers chan struct{} // requests receiving a body, at most maxBodyReads
	streams chan struct{} // streaming replies, at most maxStreams
	// compiling is held while a long query text compiles (queries.go).
	compiling chan struct{}
	mux       *http.ServeMux
}

// handlerFunc serves one method of one endpoint. It writes the reply itself on
// success and returns an error (an *apiError, or anything else for a 500)
// otherwise, with nothing written.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// methods maps the methods of one endpoint to their handlers.
type methods map[string]handlerFunc

// NewHandler returns the admin API for this program's monitor: the endpoints under
// Prefix and /metrics. Start serves it on a listener with timeouts; a program
// with its own server may mount it there instead (its paths are absolute). It is
// safe for concurrent use and never panics into the server.
func NewHandler(opts Options) http.Handler {
	a := &api{slots: make(chan struct{}, maxInFlight), readers: make(chan struct{}, maxBodyReads), streams: make(chan struct{}, maxStreams), compiling: make(chan struct{}, 1), mux: http.NewServeMux()}
	if opts.Token != "" {
		a.tokenSum, a.hasToken = sha256.Sum256([]byte(opts.Token)), true
	}
	a.handle("", methods{"GET": a.index})
	a.handle("probes", methods{"GET": a.probes})
	a.handle("rules", methods{"GET": a.rules, "POST": a.addRule, "PUT": a.setRules})
	a.handle("rules/{i}", methods{"DELETE": a.deleteRule})
	a.handle("sampling", methods{"GET": a.sampling, "PUT": a.setSampling})
	a.handle("analysis", methods{"GET": a.analysis, "PUT": a.setAnalysis})
	a.handle("analysis/run", methods{"POST": a.runAnalysis})
	a.handle("analysis/history", methods{"GET": a.history})
	a.handle("stats", methods{"GET": a.stats})
	a.handle("writer", methods{"GET": a.writer})
	a.handle("writer/recent", methods{"GET": a.recent}) // recent.go
	a.handle("auth", methods{"POST": a.auth})           // recent.go
	a.routeQueries()                                    // queries.go
	a.handleFree("health", methods{"GET": a.health})
	a.handle("metrics", methods{"GET": a.metrics})
	a.mux.Handle("/metrics", a.wrap(methods{"GET": a.metrics}, true))
	a.mux.Handle("/", a.wrap(nil, false)) // everything else: a JSON 404
	return a.mux
}

// endpoints lists the paths for the index, in registration order.
var endpoints []string

func (a *api) handle(path string, m methods) { a.route(path, a.wrap(m, true)) }

// handleFree registers an endpoint that takes no in-flight slot: a health check
// must answer while the slots are busy.
func (a *api) handleFree(path string, m methods) { a.route(path, a.wrap(m, false)) }

func (a *api) route(path string, h http.Handler) {
	p := Prefix + path
	if path == "" {
		p += "{$}" // the index only, not every path below it
	} else if !slices.Contains(endpoints, p) {
		endpoints = append(endpoints, p)
	}
	a.mux.Handle(p, h)
}

// wrap adds what every endpoint shares: method dispatch (405 with Allow), the
// token check for mutating methods, the body limit and deadline, the in-flight
// bound (when slot is set), panic recovery, error replies and the reply
// deadline.
//
// The handler runs between reading the body and writing the reply: the body is
// read whole first, within bodyTimeout, and the handler writes into a buffer
// that is sent, within replyTimeout, after its slot is free. A client that sends
// slowly or reads slowly holds only its own connection.
func (a *api) wrap(m methods, slot bool) http.Handler {
	allow := make([]string, 0, len(m))
	for k := range m {
		allow = append(allow, k)
	}
	slices.Sort(allow)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m == nil {
			writeError(w, errorf(http.StatusNotFound, "no endpoint %s (see GET %s)", r.URL.Path, Prefix))
			return
		}
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet // net/http drops the body
		}
		h := m[method]
		if h == nil {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, errorf(http.StatusMethodNotAllowed, "%s %s is not allowed (want %s)", r.Method, r.URL.Path, strings.Join(allow, " or ")))
			return
		}
		if method != http.MethodGet && !a.admitChange(w, r) {
			return
		}
		reply := &replyBuffer{header: w.Header()}
		if slot && !a.acquire(r) {
			return // the client left while waiting
		}
		func() {
			if slot {
				defer func() { <-a.slots }() // also when the handler aborts
			}
			serve(h, reply, r)
		}()
		reply.send(w)
	})
}

// admitChange checks a change's token and reads its body (within its limits)
// so the handler finds it in r.Body; false when it wrote the refusal.
func (a *api) admitChange(w http.ResponseWriter, r *http.Request) bool {
	if err := a.authorize(r); err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tigris"`)
		writeError(w, err)
		return false
	}
	body, err := a.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

// acquire takes an in-flight slot; false when the client left while waiting.
func (a *api) acquire(r *http.Request) bool {
	select {
	case a.slots <- struct{}{}:
		return true
	case <-r.Context().Done():
		return false
	}
}

// serve runs h, turning an error or a panic into an error reply.
func serve(h handlerFunc, w *replyBuffer, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v) // the server's way to abort a response; it recovers it
			}
			fmt.Fprintf(stderr, "tigris: admin: internal error serving %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
			w.reset()
			writeError(w, errorf(http.StatusInternalServerError, "internal error: %v", v))
		}
	}()
	if err := h(w, r); err != nil {
		w.reset()
		writeError(w, err)
	}
}

// readBody reads the whole request body, at most MaxBody bytes, within
// bodyTimeout, while at most maxBodyReads requests do so.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	select {
	case a.readers <- struct{}{}:
		defer func() { <-a.readers }()
	default:
		return nil, errorf(http.StatusServiceUnavailable, "too many requests sending a body at once (%d); retry", maxBodyReads)
	}
	// A handler mounted on a server or a recorder without deadlines keeps that
	// server's own timeouts: the error only says deadlines are not supported.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &tooBig):
		return nil, errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", tooBig.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, errorf(http.StatusRequestTimeout, "request body not received within %s", bodyTimeout)
	}
	return nil, errorf(http.StatusBadRequest, "reading the request body: %v", err)
}

// replyBuffer holds a handler's reply until wrap sends it. Headers go straight
// to the real writer's map, which sends nothing before WriteHeader.
type replyBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *replyBuffer) Header() http.Header { return b.header }

func (b *replyBuffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *replyBuffer) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// reset drops what a failing handler wrote, so its error reply replaces it.
func (b *replyBuffer) reset() {
	b.status = 0
	b.body.Reset()
}

// send writes the reply within replyTimeout.
func (b *replyBuffer) send(w http.ResponseWriter) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(replyTimeout))
	w.Header().Set("Content-Length", strconv.Itoa(b.body.Len()))
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes())
}

// authorize checks the bearer token of a mutating request.
func (a *api) authorize(r *http.Request) error {
	if !a.hasToken {
		return nil
	}
	// The scheme is case-insensitive and followed by one or more spaces (RFC
	// 9110, section 11.4): "bearer x" and "BEARER  x" are both the token x.
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return errorf(http.StatusUnauthorized, "missing bearer token (this program requires Authorization: Bearer <token> for changes)")
	}
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) != 1 {
		return errorf(http.StatusUnauthorized, "wrong bearer token")
	}
	return nil
}

// apiError is an error reply.
type apiError struct {
	status int
	ErrorBody
}

func (e *apiError) Error() string { return e.ErrorBody.Error }

// errorf is an error reply with a status and a message.
func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, ErrorBody: ErrorBody{Error: fmt.Sprintf(format, args...)}}
}

// badRequest is a 400 about one field; a syntax error's position, if err has
// one, goes into the reply.
func badRequest(field string, err error) *apiError {
	line, col := position(err)
	msg := err.Error()
	// Name the field once: "sampling 1.5 out of range" and "analysis settings:
	// analysis.criteria: ..." already do.
	if !strings.HasPrefix(msg, field+" ") && !strings.Contains(msg, field+": ") {
		msg = field + ": " + msg
	}
	return &apiError{status: http.StatusBadRequest, ErrorBody: ErrorBody{
		Error: msg, Field: field, Line: line, Column: col,
	}}
}

func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{status: http.StatusInternalServerError, ErrorBody: ErrorBody{Error: err.Error()}}
	}
	writeJSON(w, ae.status, ae.ErrorBody)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorBody{Error: "encoding the reply: " + err.Error()})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decodeBody decodes the request's JSON body into v: one value, no unknown
// fields. wrap has read the body already (at most MaxBody bytes).
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("more after the JSON value (want exactly one object)")
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "empty request body (want a JSON object, see docs/admin-api.md)")
	}
	return errorf(http.StatusBadRequest, "request body: %v", err)
}

// position finds the line and column of a syntax error. The pointcut and
// TigrisDSL parsers report participle errors, formatted "line:col: message"
// relative to the expression; wrappers put context in front. Looking for that
// form keeps this package free of the parser library's types.
func position(err error) (line, col int) {
	if err == nil {
		return 0, 0
	}
	// Innermost first: the parser's own error carries the position.
	var chain []error
	for e := err; e != nil; e = errors.Unwrap(e) {
		chain = append(chain, e)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if l, c, ok := leadingPosition(chain[i].Error()); ok {
			return l, c
		}
	}
	// Not wrapped with %w: the first "line:col: " after a ": " in the text.
	msg := err.Error()
	for {
		i := strings.Index(msg, ": ")
		if i < 0 {
			return 0, 0
		}
		msg = msg[i+2:]
		if l, c, ok := leadingPosition(msg); ok {
			return l, c
		}
	}
}

// leadingPosition parses a leading "line:col: " of s.
func leadingPosition(s string) (line, col int, ok bool) {
	num := func() (int, bool) {
		n, i := 0, 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && i < 7; i++ {
			n = n*10 + int(s[i]-'0')
		}
		s = s[i:]
		return n, i > 0
	}
	if line, ok = num(); !ok || !strings.HasPrefix(s, ":") {
		return 0, 0, false
	}
	s = s[1:]
	if col, ok = num(); !ok || !strings.HasPrefix(s, ": ") {
		return 0, 0, false
	}
	return line, col, true
}
