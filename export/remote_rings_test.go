package export

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/internal/tracegen"
)

// shipRings ships the Rings (trace 7's remote parent moved after every
// record) with Once and maxMemory, and returns the stats and the traces
// some of whose spans lack their trace's id (the request's when it joined
// one).
func shipRings(t *testing.T, rs *tracegen.Rings, maxMemory int64) (Stats, map[uint64]int) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	rs.DelayRemote(7)
	if err := rs.Write(path); err != nil {
		t.Fatal(err)
	}
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.Once, o.MaxMemory = true, maxMemory
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stats, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stream := streamOf(t, path)
	spans := r.Spans()
	wrong := map[uint64]int{}
	for trace, n := range rs.Records {
		tid, joined := rs.IDs[trace]
		if !joined {
			tid = TraceID(stream, trace)
		}
		for eoi := 0; eoi < n; eoi++ {
			sid := SpanID(stream, trace, uint32(eoi))
			if _, ok := spans[otlptest.Key(tid[:], sid[:])]; !ok {
				wrong[trace]++
			}
		}
	}
	return stats, wrong
}

// TestRemoteInterleaved: the writer's per-P rings put records of a trace
// whose goroutine changed P before the trace's remote parent (and trace 7's
// after every record). The shipper holds a complete trace for its settling
// window, so every span of a joined trace still carries the request's trace
// id.
func TestRemoteInterleaved(t *testing.T) {
	rs := tracegen.Concurrent(600, 100, 4, 11)
	stats, wrong := shipRings(t, rs, 0)
	if len(wrong) > 0 || stats.LateRemotes != 0 {
		t.Errorf("traces with spans that lack their trace id: %v (%d traces have records before their remote parent); %d late remote parents", wrong, rs.EarlyTraces, stats.LateRemotes)
	}
}

// TestRemoteLate: a remote parent that comes after its trace's spans were
// sent (further behind than the settling window, 7,281 records under 4 MiB)
// cannot give them the request's trace id, and is counted rather than
// missed silently.
func TestRemoteLate(t *testing.T) {
	rs := tracegen.Concurrent(2500, 100, 4, 12)
	stats, wrong := shipRings(t, rs, 4<<20)
	if len(wrong) != 1 || wrong[7] != 4 || stats.LateRemotes != 1 {
		t.Errorf("traces with spans that lack their trace id: %v, want trace 7's 4; %d late remote parents, want 1", wrong, stats.LateRemotes)
	}
}
