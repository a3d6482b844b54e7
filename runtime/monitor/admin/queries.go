package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
	"github.com/tigrisgo/tigris/runtime/query/live"
)

// The query endpoints (docs/queries.md): post a query and read its rows as
// they come, list, explain, cancel. Rows are streamed as JSON lines, so
// these replies are not buffered like the others: a streaming reply holds
// no in-flight slot, at most maxStreams run at once, and each write must
// reach the client within replyTimeout or the stream ends (and an attached
// query with it).

// maxStreams bounds the streaming replies at once; one more gets 503.
const maxStreams = 16

// heartbeat is how often a stream without rows sends a stats line, which
// also finds readers that left.
var heartbeat = 5 * time.Second

// QueryRequest is the body of POST queries.
type QueryRequest struct {
	// Query is the query text: one or more statements.
	Query string `json:"query"`
	// Detach keeps the queries running after the reply (201 with their ids),
	// and the streams it creates for later queries. Without it the reply
	// streams the rows of the text's one SELECT or trigger, which is
	// cancelled when the client leaves.
	Detach bool `json:"detach,omitempty"`
}

// Statement is what a POST did with one statement, or a query's
// description.
type Statement struct {
	// Kind is "select", "trigger", "stream" (CREATE STREAM) or "explain".
	Kind    string         `json:"kind"`
	ID      int            `json:"id,omitempty"`
	Stream  string         `json:"stream,omitempty"`
	Text    string         `json:"text,omitempty"`
	Plan    string         `json:"plan,omitempty"`
	Columns []query.Column `json:"columns,omitempty"`
}

// ExplainRequest is the body of POST queries/explain.
type ExplainRequest struct {
	// Query is the query text: one or more statements, each explained.
	Query string `json:"query"`
}

// QueryPosted answers a detached POST queries and queries/explain.
type QueryPosted struct {
	Statements []Statement `json:"statements"`
}

// QueryList answers GET queries.
type QueryList struct {
	Queries []live.Info   `json:"queries"`
	Streams []live.Stream `json:"streams"`
	// Limits are the program's query limits (tigris.yaml's queries section).
	Limits QueryLimits `json:"limits"`
	// Usage is what the running queries use together, measured.
	Usage live.Usage `json:"usage"`
}

// QueryLimits are the limits a query is checked against.
type QueryLimits struct {
	Max       int     `json:"max"`
	MaxProbes int     `json:"maxProbes"`
	Budget    float64 `json:"budget"`
	// MaxMemory is what the running queries' windows, join buffers and
	// group tables may hold together, in bytes.
	MaxMemory int64 `json:"maxMemory"`
}

// QueryDetail answers GET queries/{id}.
type QueryDetail struct {
	live.Info
	Plan    string         `json:"plan"`
	Columns []query.Column `json:"columns"`
}

// QueryHead is the first line of a streamed reply.
type QueryHead struct {
	Query QueryDetail `json:"query"`
}

// configureQueries gives the program's query registry the limits of its
// settings.
func configureQueries() {
	s := monitor.QuerySettings()
	live.Configure(live.Options{MaxQueries: s.Max, Limits: engine.Limits{MaxProbes: s.MaxProbes, Budget: s.Budget}})
}

func (a *api) routeQueries() {
	configureQueries()
	buffered := a.wrap(methods{"GET": a.listQueries}, true)
	post := a.stream(a.postQuery)
	a.route("queries", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			post.ServeHTTP(w, r)
			return
		}
		buffered.ServeHTTP(w, r)
	}))
	a.handle("queries/explain", methods{"GET": a.explainQuery, "POST": a.explainQuery})
	a.handle("queries/{id}", methods{"GET": a.getQuery, "DELETE": a.cancelQuery})
	a.route("queries/{id}/results", a.stream(a.queryResults))
	a.handle("streams/{name}", methods{"DELETE": a.dropStream})
}

// stream wraps a streaming handler: token check for changes, the body limit
// and deadline, the bound on streams at once, panic recovery and error
// replies for what fails before the first row.
func (a *api) stream(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, POST")
			writeError(w, errorf(http.StatusMethodNotAllowed, "%s %s is not allowed", r.Method, r.URL.Path))
			return
		}
		if r.Method == http.MethodPost && !a.admitChange(w, r) {
			return
		}
		select {
		case a.streams <- struct{}{}:
			defer func() { <-a.streams }()
		default:
			writeError(w, errorf(http.StatusServiceUnavailable, "too many query streams at once (%d); retry, or post with detach", maxStreams))
			return
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				fmt.Fprintf(stderr, "tigris: admin: internal error serving %s %s: %v\n", r.Method, r.URL.Path, v)
			}
		}()
		if err := h(w, r); err != nil {
			writeError(w, err)
		}
	})
}

// streamWriter sends each write within replyTimeout and flushes it.
type streamWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	return &streamWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *streamWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(replyTimeout))
	return s.w.Write(p)
}

func (s *streamWriter) flush() { _ = s.rc.Flush() }

// stopWith stops a compile once r's client has left.
func stopWith(r *http.Request) func() bool {
	ctx := r.Context()
	return func() bool { return ctx.Err() != nil }
}

// queryError turns an error of live.Post into its reply.
func queryError(err error) error {
	var qe *query.Error
	var refused *live.RefusedError
	switch {
	case errors.Is(err, query.ErrStopped):
		// Nobody reads it: the client left.
		return errorf(http.StatusServiceUnavailable, "the client left while its query compiled")
	case errors.As(err, &qe):
		return &apiError{status: http.StatusBadRequest, ErrorBody: ErrorBody{Error: qe.Error(), Field: "query", Line: qe.Line, Column: qe.Col}}
	case errors.As(err, &refused):
		return &apiError{status: http.StatusUnprocessableEntity, ErrorBody: ErrorBody{Error: err.Error(), Field: "query", Plan: refused.Plan.Explain()}}
	case errors.Is(err, live.ErrTooMany):
		return errorf(http.StatusConflict, "%v", err)
	}
	return &apiError{status: http.StatusBadRequest, ErrorBody: ErrorBody{Error: err.Error(), Field: "query"}}
}

func statement(p live.Posted) Statement {
	switch {
	case p.Stream != "":
		return Statement{Kind: "stream", Stream: p.Stream}
	case p.Explain:
		return Statement{Kind: "explain", Text: p.Plan.Query.Text, Plan: p.Plan.Explain(), Columns: p.Plan.Query.Schema}
	}
	in := p.Query.Info()
	return Statement{Kind: in.Kind, ID: in.ID, Text: in.Text, Plan: p.Plan.Explain(), Columns: p.Plan.Query.Schema}
}

// postQuery serves POST queries.
func (a *api) postQuery(w http.ResponseWriter, r *http.Request) error {
	var req QueryRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Query == "" {
		return badRequest("query", errors.New("empty query (want e.g. SELECT function, count(*) FROM calls GROUP BY function WINDOW 10s)"))
	}
	done, err := a.compileTurn(r, req.Query)
	if err != nil {
		return err
	}
	defer func() {
		if done != nil {
			done()
		}
	}()
	// A client that leaves stops the compile (query.CompileStop).
	qs, err := live.Default().Compile(req.Query, stopWith(r))
	if err != nil {
		return queryError(err)
	}
	if !req.Detach {
		// Check before anything starts that the text has one query to stream.
		running := 0
		for _, q := range qs {
			if !q.Explain && q.Kind != query.KindStream {
				running++
			}
		}
		if running > 1 {
			return badRequest("query", fmt.Errorf("%d queries in one streamed post; stream one at a time, or post with detach", running))
		}
	}
	a.mu.Lock()
	posted, err := live.Default().Start(qs, req.Detach)
	a.mu.Unlock()
	done()
	done = nil // not held while the rows stream
	if err != nil {
		return queryError(err)
	}
	var q *live.Query
	out := QueryPosted{}
	for _, p := range posted {
		out.Statements = append(out.Statements, statement(p))
		if p.Query != nil {
			q = p.Query
		}
	}
	if req.Detach || q == nil {
		status := http.StatusOK
		if q != nil || len(posted) > 0 && posted[0].Stream != "" {
			status = http.StatusCreated
		}
		writeJSON(w, status, out)
		return nil
	}
	// Attached: the reply is the query's rows; the query ends with it.
	defer q.Cancel()
	sw := newStreamWriter(w)
	head := QueryHead{Query: detail(q)}
	if err := writeLine(sw, head); err != nil {
		return nil
	}
	sw.flush()
	_ = q.WriteStream(r.Context(), sw, 0, heartbeat, sw.flush)
	return nil
}

func detail(q *live.Query) QueryDetail {
	return QueryDetail{Info: q.Info(), Plan: q.Explain(), Columns: q.Columns()}
}

func writeLine(w *streamWriter, v any) error {
	b, err := marshalLine(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// listQueries serves GET queries.
func (a *api) listQueries(w http.ResponseWriter, r *http.Request) error {
	reg := live.Default()
	out := QueryList{Queries: []live.Info{}, Streams: reg.Streams()}
	for _, q := range reg.List() {
		out.Queries = append(out.Queries, q.Info())
	}
	o := reg.Options()
	out.Limits = QueryLimits{Max: o.MaxQueries, MaxProbes: o.Limits.MaxProbes, Budget: o.Limits.Budget, MaxMemory: o.MaxMemory}
	out.Usage = reg.Usage()
	writeJSON(w, http.StatusOK, out)
	return nil
}

// explainQuery serves queries/explain: POST with {"query": TEXT}, any
// query (query.MaxText bytes), or GET ?query=TEXT for one short enough for
// a URL: the plans, nothing run. It needs the token when the program has
// one, as changes do: it reads nothing the program keeps, but compiling and
// planning cost the program CPU and memory in proportion to the text.
func (a *api) explainQuery(w http.ResponseWriter, r *http.Request) error {
	var text string
	if r.Method == http.MethodPost { // wrap checked the token
		var req ExplainRequest
		if err := decodeBody(r, &req); err != nil {
			return err
		}
		text = req.Query
	} else {
		if err := a.authorize(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tigris"`)
			return err
		}
		text = r.URL.Query().Get("query")
	}
	if text == "" {
		return badRequest("query", errors.New(`missing query: POST {"query": TEXT}, or GET ?query=TEXT for a short one`))
	}
	reg := live.Default()
	done, err := a.compileTurn(r, text)
	if err != nil {
		return err
	}
	defer done()
	qs, err := reg.Compile(text, stopWith(r))
	if err != nil {
		return queryError(err)
	}
	// Explain every statement: EXPLAIN is implied.
	out := QueryPosted{}
	for _, q := range qs {
		if q.Kind == query.KindStream {
			out.Statements = append(out.Statements, Statement{Kind: "stream", Stream: q.Name, Text: q.Text})
			continue
		}
		p, err := live.Explain(q, reg)
		if err != nil {
			return queryError(err)
		}
		out.Statements = append(out.Statements, Statement{Kind: "explain", Text: q.Text, Plan: p.Explain(), Columns: q.Schema})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// longQuery is the length from which query texts compile one at a time:
// compiling allocates 1.3 to 6 KB a byte of text (most of it garbage at
// once), up to 380 MB for the longest, so four handlers compiling long
// texts at once would take the program's heap up by that four times.
const longQuery = 4 << 10

// compileTurn waits, for a long text, until no other long text compiles;
// the caller calls done when it has compiled and planned.
func (a *api) compileTurn(r *http.Request, text string) (done func(), err error) {
	if len(text) < longQuery {
		return func() {}, nil
	}
	select {
	case a.compiling <- struct{}{}:
		return func() { <-a.compiling }, nil
	case <-r.Context().Done():
		return nil, errorf(http.StatusServiceUnavailable, "the client left while waiting to compile its query")
	}
}

func (a *api) queryByID(r *http.Request) (*live.Query, error) {
	s := r.PathValue("id")
	id, err := strconv.Atoi(s)
	if err != nil {
		return nil, badRequest("id", fmt.Errorf("%q is not a query id (GET %squeries lists them)", s, Prefix))
	}
	q := live.Default().Get(id)
	if q == nil {
		return nil, errorf(http.StatusNotFound, "no query %d (GET %squeries lists them)", id, Prefix)
	}
	return q, nil
}

// getQuery serves GET queries/{id}.
func (a *api) getQuery(w http.ResponseWriter, r *http.Request) error {
	q, err := a.queryByID(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, detail(q))
	return nil
}

// maxEndReason bounds the reason a client gives for ending its query.
const maxEndReason = 200

// cancelQuery serves DELETE queries/{id}[?reason=TEXT]: the query stops and
// its probes are restored before the reply. The reason, when its client
// gives one ("ended after 10s (--for)"), is the query's end; without one it
// is "cancelled".
func (a *api) cancelQuery(w http.ResponseWriter, r *http.Request) error {
	q, err := a.queryByID(r)
	if err != nil {
		return err
	}
	reason := r.URL.Query().Get("reason")
	if err := checkEndReason(reason); err != nil {
		return badRequest("reason", err)
	}
	q.End(reason)
	writeJSON(w, http.StatusOK, detail(q))
	return nil
}

// queryResults serves GET queries/{id}/results?from=N: the rows from N on
// (0: the oldest kept), then new ones as they come, until the query ends or
// the client leaves (the query goes on).
func (a *api) queryResults(w http.ResponseWriter, r *http.Request) error {
	q, err := a.queryByID(r)
	if err != nil {
		return err
	}
	from := uint64(0)
	if s := r.URL.Query().Get("from"); s != "" {
		if from, err = strconv.ParseUint(s, 10, 64); err != nil {
			return badRequest("from", fmt.Errorf("%q is not a row number", s))
		}
	}
	sw := newStreamWriter(w)
	if err := writeLine(sw, QueryHead{Query: detail(q)}); err != nil {
		return nil
	}
	sw.flush()
	_ = q.WriteStream(r.Context(), sw, from, heartbeat, sw.flush)
	return nil
}

// checkEndReason accepts a short line of text.
func checkEndReason(s string) error {
	if len(s) > maxEndReason {
		return fmt.Errorf("a reason of %d bytes; the most is %d", len(s), maxEndReason)
	}
	for _, c := range s {
		if c < ' ' || c == 0x7f || c == utf8.RuneError {
			return fmt.Errorf("%q is not one line of text", query.Clip(s))
		}
	}
	return nil
}

// dropStream serves DELETE streams/{name}.
func (a *api) dropStream(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if !live.Default().DropStream(name) {
		return errorf(http.StatusNotFound, "no stream %q (GET %squeries lists them)", name, Prefix)
	}
	writeJSON(w, http.StatusOK, live.Default().Streams())
	return nil
}

func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}
