package live

import (
	"context"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
)

// joinedCall is a call of p as the prologue of a function with an
// *http.Request parameter makes it: a trace root hands the request's
// headers to JoinRequest.
func joinedCall(p *monitor.Probe, h map[string][]string) {
	if !p.On() {
		return
	}
	c := monitor.Start(p)
	if c.Joins() {
		monitor.JoinRequest(&c, context.Background(), h)
	}
	c.Exit(nil)
}

// TestTraceIDColumn: trace_id is the W3C trace id of the request whose
// trace the call's trace joined, "" for a trace that joined none, and a
// query filters by it; reading it switches the probe to fine.
func TestTraceIDColumn(t *testing.T) {
	setup(t)
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	reg := NewRegistry(fastOptions())
	all, err := reg.Post(`SELECT name, trace_id FROM calls WHERE name = 'Find'`, false)
	if err != nil {
		t.Fatal(err)
	}
	one, err := reg.Post(`SELECT name, trace, trace_id FROM calls WHERE name = 'Find' AND trace_id = '`+id+`'`, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := modes(); got[0] != "fine" {
		t.Fatalf("modes while the queries run: %v, want Find fine for trace_id", got)
	}
	joinedCall(&probes[0], map[string][]string{"Traceparent": {"00-" + id + "-00f067aa0ba902b7-01"}})
	joinedCall(&probes[0], nil)
	joinedCall(&probes[0], map[string][]string{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}})
	time.Sleep(50 * time.Millisecond)
	all[0].Query.Cancel()
	one[0].Query.Cancel()
	rows := rowsOf(read(t, all[0].Query))
	want := []string{id, "", "0af7651916cd43dd8448eb211c80319c"}
	if len(rows) != len(want) {
		t.Fatalf("rows %v, want trace ids %q", rows, want)
	}
	for i, r := range rows {
		if r[1] != want[i] {
			t.Errorf("row %d: %v, want trace_id %q", i, r, want[i])
		}
	}
	rows = rowsOf(read(t, one[0].Query))
	if len(rows) != 1 || rows[0][2] != id || rows[0][1] == nil {
		t.Fatalf("WHERE trace_id = %q: rows %v, want the first call's", id, rows)
	}
}
