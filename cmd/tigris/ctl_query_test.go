package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/admintest"
	"github.com/tigrisgo/tigris/queryout"
	"github.com/tigrisgo/tigris/runtime/query/live"
)

// TestCtlQueryForJSON: a query --for ends is not "cancelled" in the
// program's own end line either (what --json prints), and the line says
// when it ended, an RFC 3339 time.
func TestCtlQueryForJSON(t *testing.T) {
	addr := admintest.Server(t, "")
	admintest.CallEvery(t, 0, 2*time.Millisecond)
	out, err := runCtl(t, "--addr", addr, "--json", "query", "--for", "300ms", "SELECT count(*) AS n FROM calls WINDOW 10s")
	if err != nil {
		t.Fatalf("ctl query: %v\n%s", err, out)
	}
	i := strings.LastIndex(out, `{"end"`)
	if i < 0 {
		t.Fatalf("no end line:\n%s", out)
	}
	// --json prints the result stream's lines and nothing else (the reply
	// of the end it asked for is not one of them), under ctl's header.
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "# ") && !json.Valid([]byte(l)) {
			t.Errorf("a line that is not a JSON line: %q\n%s", l, out)
			break
		}
	}
	var end struct {
		End   string `json:"end"`
		Ended string `json:"ended"`
	}
	line, _, _ := strings.Cut(out[i:], "\n")
	if err := json.Unmarshal([]byte(line), &end); err != nil {
		t.Fatalf("end line %q: %v", out[i:], err)
	}
	if end.End != "ended after 300ms (--for)" {
		t.Errorf("end %q, want %q", end.End, "ended after 300ms (--for)")
	}
	if at, err := time.Parse(time.RFC3339Nano, end.Ended); err != nil || at.IsZero() {
		t.Errorf("ended %q: %v", end.Ended, err)
	}
}

// TestCtlQueryThatCanProduceNothing: a query no probe can feed fails at
// once, saying why, instead of waiting with 0 probes.
func TestCtlQueryThatCanProduceNothing(t *testing.T) {
	addr := admintest.Server(t, "")
	out, err := runCtl(t, "--addr", addr, "query", "SELECT name FROM calls WHERE function = '…/shop.(*Store).Find'")
	const want = "query refused: it can produce nothing, now or later: calls: no probe matches function = '…/shop.(*Store).Find'; probes have function like 'shop.example/shop.(*Store).Find'"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want %q\n%s", err, want, out)
	}
	if strings.Contains(out, "probe(s)") {
		t.Errorf("the query started:\n%s", out)
	}
	t.Logf("%v", err)
}

// TestPrintEventLeftOut: what a query left out is a note among the rows of
// ctl query's table and of the dashboard's query box (both print events
// with queryout.PrintEvent).
func TestPrintEventLeftOut(t *testing.T) {
	var buf bytes.Buffer
	out := &queryout.Table{W: &buf}
	at := time.Date(2026, 11, 25, 20, 46, 13, 204e6, time.UTC)
	from, to := at.Truncate(10*time.Second), at.Truncate(10*time.Second).Add(10*time.Second)
	for _, ev := range []adminclient.QueryEvent{
		{Dropped: &live.Dropped{Since: &at, Why: "taking one call in 4"}},
		{Dropped: &live.Dropped{From: &from, To: &to, Shed: 818}},
	} {
		if err := queryout.PrintEvent(out, ev); err != nil {
			t.Fatal(err)
		}
	}
	const want = "(from 20:46:13.204Z calls are left out: taking one call in 4; the rows count only the calls taken)\n" +
		"(20:46:10.000Z–20:46:20.000Z: the rows leave out 818 calls shed)\n"
	if buf.String() != want {
		t.Errorf("got\n%swant\n%s", buf.String(), want)
	}
}

// TestCtlQueryInterruptedBeforeItStarts: an interrupt while the program
// still compiles the query ends ctl at once, leaving the request (which
// stops the compile): it does not wait for the query to start.
func TestCtlQueryInterruptedBeforeItStarts(t *testing.T) {
	addr := admintest.Server(t, "")
	defer func(f func(chan<- os.Signal)) { notifyInterrupt = f }(notifyInterrupt)
	notifyInterrupt = func(ch chan<- os.Signal) { ch <- os.Interrupt } // before anything is sent
	out, err := runCtl(t, "--addr", addr, "query", "SELECT name FROM calls")
	if err == nil || !strings.Contains(err.Error(), "interrupted before the query started") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if strings.Contains(out, "probe(s)") {
		t.Errorf("the query started:\n%s", out)
	}
}
