package adminclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	rq "github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/live"
)

// QueryEvent is one line of a query's result stream; one field is set.
type QueryEvent struct {
	// Head describes the query: the first line of every stream.
	Head *admin.QueryDetail
	// Schema announces the shape of the rows of one schema index.
	Schema *SchemaEvent
	// Row is one result row, decoded by its schema's column types.
	Row *RowEvent
	// Skipped rows were overwritten before this reader got them.
	Skipped uint64
	// Dropped is what the query left out, said among its rows: when it
	// starts leaving calls out and why, or the calls of one window (one
	// second without WINDOW) it shed and lost.
	Dropped *live.Dropped
	// Stats are the query's counters (heartbeats and the end).
	Stats map[string]uint64
	// End is why the query ended: the stream's last event. Ended is when, on
	// the program's clock (zero from a program that does not say): windows
	// open then were cut short.
	End   string
	Ended time.Time
}

// SchemaEvent is a schema line.
type SchemaEvent struct {
	Index int
	rq.Schema
}

// RowEvent is a row of schema Schema.
type RowEvent struct {
	Schema int
	Vals   []rq.Value
}

// streamSilence is how long a stream may send nothing before the client
// gives up: the program sends a stats line every 5 s without rows.
const streamSilence = 30 * time.Second

// Query posts text (one SELECT or trigger, after any CREATE STREAMs) and
// calls handle with each event of its result stream until the query ends,
// ctx is done or handle returns an error. The program cancels the query when
// the stream closes, so returning early cancels it.
func (c *Client) Query(ctx context.Context, text string, handle func(QueryEvent) error) error {
	body, _ := json.Marshal(admin.QueryRequest{Query: text})
	return c.stream(ctx, http.MethodPost, admin.Prefix+"queries", body, text, handle)
}

// QueryResults reads the result stream of query id from row from on (0: the
// oldest the program keeps). Leaving it does not cancel the query.
func (c *Client) QueryResults(ctx context.Context, id int, from uint64, handle func(QueryEvent) error) error {
	path := fmt.Sprintf("%squeries/%d/results?from=%d", admin.Prefix, id, from)
	return c.stream(ctx, http.MethodGet, path, nil, "", handle)
}

// PostQueries starts the queries of text detached: they run until cancelled,
// and its CREATE STREAMs stay for later queries.
func (c *Client) PostQueries(ctx context.Context, text string) (*admin.QueryPosted, error) {
	return call[admin.QueryPosted](ctx, c, http.MethodPost, admin.Prefix+"queries", admin.QueryRequest{Query: text, Detach: true}, text)
}

// Explain plans the statements of text against the program without running
// them.
func (c *Client) Explain(ctx context.Context, text string) (*admin.QueryPosted, error) {
	return c.explain(ctx, text)
}

// Queries lists the program's queries and named streams.
func (c *Client) Queries(ctx context.Context) (*admin.QueryList, error) {
	return call[admin.QueryList](ctx, c, http.MethodGet, admin.Prefix+"queries", nil, "")
}

// CancelQuery stops query id; its probes are restored when it returns.
func (c *Client) CancelQuery(ctx context.Context, id int) (*admin.QueryDetail, error) {
	return call[admin.QueryDetail](ctx, c, http.MethodDelete, admin.Prefix+"queries/"+strconv.Itoa(id), nil, "")
}

// EndQuery stops query id as its own client: reason is its end in the
// program's result stream and listing ("ended after 10s (--for)"), where
// CancelQuery's is "cancelled". Its probes are restored when it returns.
// Its reply is not given to Options.Raw: the stream being read says how
// the query ended.
func (c *Client) EndQuery(ctx context.Context, id int, reason string) (*admin.QueryDetail, error) {
	quiet := *c
	quiet.opt.Raw = nil
	path := admin.Prefix + "queries/" + strconv.Itoa(id) + "?reason=" + url.QueryEscape(reason)
	return call[admin.QueryDetail](ctx, &quiet, http.MethodDelete, path, nil, "")
}

// DropStream forgets a named stream.
func (c *Client) DropStream(ctx context.Context, name string) error {
	_, err := c.do(ctx, http.MethodDelete, admin.Prefix+"streams/"+url.PathEscape(name), nil, nil, "")
	return err
}

// stream sends a request whose reply is a result stream and decodes it.
func (c *Client) stream(ctx context.Context, method, path string, body []byte, expr string, handle func(QueryEvent) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	}
	// No overall timeout: a stream lasts as long as its query. A silent
	// stream is cut by the watchdog below instead.
	resp, err := (&http.Client{Transport: c.http.Transport}).Do(req)
	if err != nil {
		return c.unreachable(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxReply))
		e := &Error{Status: resp.StatusCode, Expr: expr}
		if json.Unmarshal(data, &e.Body) != nil || e.Body.Error == "" {
			e.Body.Error = fmt.Sprintf("%s %s: %s", method, path, resp.Status)
		}
		return e
	}
	alive := make(chan struct{}, 1)
	var silent atomic.Bool
	go func() {
		t := time.NewTimer(streamSilence)
		defer t.Stop()
		for {
			select {
			case <-alive:
				t.Reset(streamSilence)
			case <-t.C:
				silent.Store(true)
				cancel()
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	dec := &StreamDecoder{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		select {
		case alive <- struct{}{}:
		default:
		}
		ev, err := dec.Decode(sc.Bytes())
		if err != nil {
			return fmt.Errorf("result stream of %s: %w", c.addr, err)
		}
		if c.opt.Raw != nil {
			if _, err := c.opt.Raw.Write(append(sc.Bytes(), '\n')); err != nil {
				return err
			}
		}
		if err := handle(ev); err != nil {
			return err
		}
		if ev.End != "" {
			return nil
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("result stream of %s: %w", c.addr, err)
	}
	if silent.Load() {
		return fmt.Errorf("result stream of %s: nothing received for %v", c.addr, streamSilence)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("result stream of %s ended before the query did", c.addr)
}

// StreamDecoder decodes the lines of a result stream (query's wire form),
// keeping the schemas announced so far to type the rows.
type StreamDecoder struct {
	schemas map[int]rq.Schema
}

// Decode decodes one line.
func (d *StreamDecoder) Decode(line []byte) (QueryEvent, error) {
	var raw struct {
		Query   *admin.QueryDetail `json:"query"`
		Schema  *int               `json:"schema"`
		Name    string             `json:"name"`
		Columns []rq.Column        `json:"columns"`
		Row     []json.RawMessage  `json:"row"`
		Skipped uint64             `json:"skipped"`
		Dropped *live.Dropped      `json:"dropped"`
		Stats   map[string]uint64  `json:"stats"`
		End     *string            `json:"end"`
		Ended   time.Time          `json:"ended"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return QueryEvent{}, fmt.Errorf("line %.80q: %v", line, err)
	}
	if d.schemas == nil {
		d.schemas = map[int]rq.Schema{}
	}
	switch {
	case raw.Query != nil:
		d.schemas[0] = rq.Schema{Name: "rows", Columns: raw.Query.Columns}
		return QueryEvent{Head: raw.Query}, nil
	case raw.Row != nil:
		i := 0
		if raw.Schema != nil {
			i = *raw.Schema
		}
		s, ok := d.schemas[i]
		if !ok {
			return QueryEvent{}, fmt.Errorf("row of schema %d before its schema line", i)
		}
		if len(raw.Row) != len(s.Columns) {
			return QueryEvent{}, fmt.Errorf("row of %d values for %d columns", len(raw.Row), len(s.Columns))
		}
		vals := make([]rq.Value, len(raw.Row))
		for j, v := range raw.Row {
			var err error
			if vals[j], err = DecodeValue(s.Columns[j].Type, v); err != nil {
				return QueryEvent{}, fmt.Errorf("column %s: %v", s.Columns[j].Name, err)
			}
		}
		return QueryEvent{Row: &RowEvent{Schema: i, Vals: vals}}, nil
	case raw.Schema != nil:
		s := rq.Schema{Name: raw.Name, Columns: raw.Columns}
		d.schemas[*raw.Schema] = s
		return QueryEvent{Schema: &SchemaEvent{Index: *raw.Schema, Schema: s}}, nil
	case raw.End != nil:
		end := *raw.End
		if end == "" {
			end = "ended"
		}
		return QueryEvent{End: end, Ended: raw.Ended, Stats: raw.Stats}, nil
	case raw.Skipped > 0:
		return QueryEvent{Skipped: raw.Skipped}, nil
	case raw.Dropped != nil:
		return QueryEvent{Dropped: raw.Dropped}, nil
	case raw.Stats != nil:
		return QueryEvent{Stats: raw.Stats}, nil
	}
	return QueryEvent{}, fmt.Errorf("unknown line %.80q", line)
}

// DecodeValue decodes one JSON value of a result row as a value of type t.
func DecodeValue(t rq.Type, raw json.RawMessage) (rq.Value, error) {
	if string(raw) == "null" {
		return rq.Value{}, nil
	}
	switch t {
	case rq.Bool:
		var b bool
		err := json.Unmarshal(raw, &b)
		return rq.BoolValue(b), err
	case rq.Int, rq.Duration:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return rq.Value{T: t, I: n}, err
	case rq.Float:
		f, err := strconv.ParseFloat(string(raw), 64)
		return rq.FloatValue(f), err
	case rq.String:
		var s string
		err := json.Unmarshal(raw, &s)
		return rq.StringValue(s), err
	case rq.Time:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return rq.Value{}, err
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		return rq.TimeValue(tm.UnixNano()), err
	}
	return rq.Value{}, fmt.Errorf("a value of type %s", t)
}
