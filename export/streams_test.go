package export

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// deadPID is the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to run: %v", err)
	}
	return cmd.Process.Pid
}

// TestEndedStreamsReleased: a shipper that follows a directory for long
// sees many short-lived programs come and go (app-{pid}.tgr). What an ended
// stream needs once everything is delivered is its position; its memory
// goes, so the shipper's heap stays within its bound however many streams
// it has followed.
func TestEndedStreamsReleased(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("tells a process gone by /proc")
	}
	dir := t.TempDir()
	pid := deadPID(t)
	const streams = 120
	total := 0
	for i := range streams {
		calls := simulate(rand.New(rand.NewPCG(uint64(i), 99)), 2, 200, false)
		total += len(calls)
		w, err := writer.NewSync(writer.Options{Path: filepath.Join(dir, fmt.Sprintf("app-%d.tgr", i)), PID: pid, FlushInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		for p := uint32(1); p <= 3; p++ {
			w.Define(writer.ProbeDef{ID: p, Signature: fmt.Sprintf("example.com/sim.F%d(int) error", p), File: "/src/sim/sim.go", Line: int(10 * p)})
		}
		for j := range calls {
			w.Write(&calls[j].rec)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// A receiver that keeps nothing, so the heap is the shipper's.
	var spans atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m tracepb.TracesData
		if err := proto.Unmarshal(b, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range m.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans.Add(int64(len(ss.Spans)))
			}
		}
	}))
	defer srv.Close()
	o := testOptions(nil, dir)
	o.Endpoint = srv.URL
	o.MaxMemory = 4 << 20
	var mu sync.Mutex
	var last Stats
	var heap uint64
	o.OnStats = func(s Stats) {
		mu.Lock()
		defer mu.Unlock()
		last = s
		if s.Ended == streams && s.SpansPending == 0 && heap == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, o); done <- err }()
	waitFor(t, "every stream ended and delivered, and the heap measured", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return heap > 0
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := spans.Load(); n != int64(total) {
		t.Errorf("%d spans for %d records", n, total)
	}
	t.Logf("%d streams ended: heap %d kB after a GC, stats %+v", streams, heap>>10, last)
	if heap > uint64(o.MaxMemory) {
		t.Errorf("after %d streams ended and were delivered the heap holds %d kB, more than --max-memory (%d kB)", streams, heap>>10, o.MaxMemory>>10)
	}
}
