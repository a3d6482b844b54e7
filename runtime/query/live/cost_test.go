package live

import (
	"runtime"
	"strings"
	"testing"
)

// TestEndedQueriesKeepASummary: once a query has ended, the registry keeps
// what listings show and its plan explained (at most MaxEndedExplain
// bytes), not its compiled query: after a query of 60 KB, a chain of 30,000
// additions, the heap is back within 2 MB of where it was (keeping the plan
// kept 17 MB).
func TestEndedQueriesKeepASummary(t *testing.T) {
	setup(t)
	r := NewRegistry(fastOptions())
	text := "SELECT 1" + strings.Repeat("+1", 30000) + " AS x FROM calls WHERE name = 'Find'"
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	if _, err := r.Post("EXPLAIN SELECT 1 AS x FROM calls", true); err != nil { // builds the parser
		t.Fatal(err)
	}
	before := heap()
	posted, err := r.Post(text, true)
	if err != nil {
		t.Fatal(err)
	}
	q := posted[0].Query
	posted = nil
	if !r.Cancel(q.ID) {
		t.Fatal("not running")
	}
	if q.Plan() != nil {
		t.Error("the ended query keeps its plan")
	}
	if e := q.Explain(); len(e) > MaxEndedExplain+64 || !strings.Contains(e, "cut: the query has ended") {
		t.Errorf("%d bytes of explanation kept", len(e))
	}
	if in := q.Info(); in.Kind != "select" || in.Probes != 1 || in.State != "ended" {
		t.Errorf("%+v", in)
	}
	if len(q.Columns()) != 1 {
		t.Errorf("columns %v", q.Columns())
	}
	// What is kept: the text (60 KB) and the explanation (16 KB).
	if after := heap(); after > before+2<<20 {
		t.Errorf("the heap grew by %d KB and stayed", (after-before)>>10)
	}
	runtime.KeepAlive(q)
}
