package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
	"github.com/tigrisgo/tigris/runtime/query/live"
)

// An attached query streams its rows and is cancelled when its client
// leaves: its probe goes back to its mode.
func TestQueryStreamsAndEndsWithItsClient(t *testing.T) {
	reset(t)
	srv := httptest.NewServer(NewHandler(Options{Token: "s3cret"}))
	noBudget()
	defer srv.Close()
	if m := pingMode(t); m != "off" {
		t.Fatalf("Ping is %s before the query", m)
	}
	body := `{"query":"SELECT name, error FROM calls WHERE name = 'Ping'"}`
	if resp, err := http.Post(srv.URL+Prefix+"queries", "application/json", strings.NewReader(body)); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a post without the token: %v %v", resp.StatusCode, err)
	}
	req, _ := http.NewRequest("POST", srv.URL+Prefix+"queries", strings.NewReader(body))
	req.Header.Set("Authorization", "bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("post: %v %v", resp, err)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatal("no head line")
	}
	var head QueryHead
	if err := json.Unmarshal(sc.Bytes(), &head); err != nil || head.Query.Kind != "select" || !strings.Contains(head.Query.Plan, "test.example/shop.Ping  coarse (now off)") {
		t.Fatalf("head %s: %v", sc.Text(), err)
	}
	if m := pingMode(t); m != "coarse" {
		t.Fatalf("Ping is %s while the query runs", m)
	}
	call(ping, nil)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), `{"row"`) {
			break
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"columns":[{"name":"name","type":"string"},{"name":"error","type":"bool"}]`) || lines[1] != `{"row":["Ping",false]}` {
		t.Fatalf("lines %q", lines)
	}
	resp.Body.Close() // the client leaves
	deadline := time.Now().Add(5 * time.Second)
	for pingMode(t) != "off" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if m := pingMode(t); m != "off" {
		t.Fatalf("Ping stays %s after the client left", m)
	}
}

func TestQueryErrorsChangeNothing(t *testing.T) {
	reset(t)
	h := NewHandler(Options{})
	rec := do(t, h, "POST", Prefix+"queries", `{"query":"SELECT count(*) FROM calls\nWHERE durration > 5ms"}`)
	var e ErrorBody
	if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Line != 2 || e.Column != 7 || e.Field != "query" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "POST", Prefix+"queries", `{"query":"SELECT name FROM calls WHERE name = 'Ping'; SELECT name FROM calls WHERE name = 'Find'"}`)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "2 queries in one streamed post") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "GET", Prefix+"queries/explain?query="+strings.ReplaceAll("SELECT * FROM calls WHERE duration > 1ms AND package = 'test.example/shop'", " ", "+"), "")
	var ex QueryPosted
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &ex) != nil || !strings.Contains(ex.Statements[0].Plan, "at exit: duration > 1ms") {
		t.Fatalf("explain: %d %s", rec.Code, rec.Body)
	}
	if m := pingMode(t); m != "off" {
		t.Fatalf("a bad or explained query switched Ping to %s", m)
	}
}

func TestDetachedQueryListCancel(t *testing.T) {
	reset(t)
	h := NewHandler(Options{})
	noBudget()
	rec := do(t, h, "POST", Prefix+"queries", `{"query":"CREATE STREAM pings AS (SELECT name FROM calls WHERE name = 'Ping'); SELECT count(*) FROM pings","detach":true}`)
	var posted QueryPosted
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &posted) != nil || len(posted.Statements) != 2 || posted.Statements[1].ID == 0 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	id := posted.Statements[1].ID
	rec = do(t, h, "GET", Prefix+"queries", "")
	var list QueryList
	if json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list.Streams) != 1 || list.Streams[0].Name != "pings" || list.Limits.Max != 8 {
		t.Fatalf("list %s", rec.Body)
	}
	if m := pingMode(t); m != "coarse" {
		t.Fatalf("Ping %s while the detached query runs", m)
	}
	rec = do(t, h, "DELETE", Prefix+"queries/"+itoa(id), "")
	if rec.Code != 200 || pingMode(t) != "off" {
		t.Fatalf("cancel: %d %s, Ping %s", rec.Code, rec.Body, pingMode(t))
	}
	if rec := do(t, h, "DELETE", Prefix+"streams/pings", ""); rec.Code != 200 {
		t.Fatalf("drop: %d %s", rec.Code, rec.Body)
	}
	if rec := do(t, h, "DELETE", Prefix+"queries/999", ""); rec.Code != 404 {
		t.Fatalf("cancel of no query: %d", rec.Code)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// noBudget lifts the query budget after NewHandler configured it: other
// tests call Ping in tight loops, so its rate says nothing of a query's cost.
func noBudget() {
	live.Configure(live.Options{Limits: engine.Limits{MaxProbes: 1000}})
}

func pingMode(t *testing.T) string { t.Helper(); return string(modeOf(t, ping)) }

// TestEndQueryWithReason: DELETE queries/{id}?reason= ends the query with
// its client's reason, which the listing and the stream's end line give;
// a reason that is not one short line is refused.
func TestEndQueryWithReason(t *testing.T) {
	reset(t)
	h := NewHandler(Options{})
	noBudget()
	rec := do(t, h, "POST", Prefix+"queries", `{"query":"SELECT name FROM calls WHERE name = 'Ping'","detach":true}`)
	var posted QueryPosted
	if rec.Code != http.StatusCreated || json.Unmarshal(rec.Body.Bytes(), &posted) != nil {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	id := itoa(posted.Statements[0].ID)
	if rec := do(t, h, "DELETE", Prefix+"queries/"+id+"?reason=%0a", ""); rec.Code != 400 {
		t.Fatalf("a reason with a line break: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "DELETE", Prefix+"queries/"+id+"?reason=ended+after+10s+(--for)", "")
	var d QueryDetail
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &d) != nil || d.Reason != "ended after 10s (--for)" {
		t.Fatalf("end: %d %s", rec.Code, rec.Body)
	}
	rec = do(t, h, "GET", Prefix+"queries/"+id+"/results", "")
	if !strings.Contains(rec.Body.String(), `{"end":"ended after 10s (--for)","ended":"`) {
		t.Fatalf("results:\n%s", rec.Body)
	}
}

// TestQueryCompileStopsWhenItsClientLeaves: a client that leaves while its
// long query compiles stops the compile (query.CompileStop bounds the work
// after the stop): nothing starts, for a post and for an explain.
func TestQueryCompileStopsWhenItsClientLeaves(t *testing.T) {
	reset(t)
	h := NewHandler(Options{})
	noBudget()
	text := "SELECT name FROM calls WHERE name = 'Ping' AND duration" + strings.Repeat(" * 1", 900) + " > 1ms"
	body, _ := json.Marshal(QueryRequest{Query: text})
	for _, path := range []string{Prefix + "queries", Prefix + "queries/explain"} {
		// The client leaves once the compile has begun.
		ctx := &leaving{Context: context.Background(), after: 3}
		req := httptest.NewRequest("POST", path, bytes.NewReader(body)).WithContext(ctx)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "the client left while its query compiled") {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
	for _, q := range live.Default().List() {
		if in := q.Info(); in.State == "running" {
			t.Errorf("query %d runs: %s", in.ID, query.Clip(in.Text))
		}
	}
	if m := pingMode(t); m != "off" {
		t.Errorf("Ping is %s", m)
	}
}

// leaving is a request's context whose client leaves after the handler
// asked after it a few times: Err says so from then on (Done never does, so
// the handler's waits for its turn go through).
type leaving struct {
	context.Context
	asked, after int
}

func (c *leaving) Err() error {
	if c.asked++; c.asked > c.after {
		return context.Canceled
	}
	return nil
}
