package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/admintest"
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
	var end struct {
		End   string `json:"end"`
		Ended string `json:"ended"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out[i:])), &end); err != nil {
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
