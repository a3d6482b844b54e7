package export

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	tigrisexport "github.com/tigrisgo/tigris/export"
	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// startShipper runs tigris export.
func startShipper(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(itest.TigrisBin, append([]string{"export"}, args...)...)
	cmd.Dir = dir
	cmd.Env = itest.Env()
	return start(t, "tigris export", cmd, nil)
}

// phase is one stretch of load and what the program did meanwhile.
type phase struct {
	name  string
	stats loadgen.Stats
}

func (p phase) String() string {
	s := p.stats
	return fmt.Sprintf("%-28s %6d requests %6.0f req/s  p50 %8s  p99 %8s  %d errors",
		p.name, s.Requests, s.Throughput, s.Latency.P50.Round(time.Microsecond), s.Latency.P99.Round(time.Microsecond), s.Errors)
}

// TestCollectorUnderLoad runs the example service under load with every
// probe fine, ships its trace files and statistics with tigris export to a
// real Collector, which forwards them to the test's receiver, and checks
// what arrived against the files and the admin endpoint. Meanwhile the
// Collector is stopped for a while and started again, and the shipper is
// stopped and started again: nothing is lost, nothing arrives twice, the
// shipper's memory stays bounded and the program does not notice.
func TestCollectorUnderLoad(t *testing.T) {
	collector(t)
	dir := t.TempDir()
	sink := otlptest.New(t)
	addr := freeAddr(t)
	cfg := collectorConfig(t, dir, addr, sink.URL)
	col := startCollector(t, cfg, addr)

	traces := filepath.Join(dir, "traces")
	trace := filepath.Join(traces, "petclinic.tgr")
	svc := startPetclinic(t, dir, "TIGRIS_MODE=fine", "TIGRIS_SAMPLING=100%", "TIGRIS_ANALYSIS=off",
		"TIGRIS_WRITER=async", "TIGRIS_OUT="+trace, "TIGRIS_ROTATE=1MiB", "TIGRIS_FLUSH=100ms")
	ckpt := filepath.Join(dir, "export.checkpoint")
	shipArgs := []string{"--endpoint", "http://" + addr, "--admin", svc.admin, "--metrics-interval", "1s",
		"--progress", "2s", "--checkpoint", ckpt, "--max-memory", "16MiB", traces}
	ship := startShipper(t, dir, shipArgs...)

	var phases []phase
	load := func(name string, d time.Duration) {
		t.Helper()
		// Short think times: enough records for the writer to rotate.
		st, err := loadgen.Run(ctx(t), loadgen.Options{BaseURL: svc.url, Duration: d, Seed: uint64(len(phases) + 1),
			MinUsers: 10, MaxUsers: 20, ThinkTime: 5 * time.Millisecond})
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		phases = append(phases, phase{name, st})
	}
	load("collector up", 8*time.Second)
	n1, _ := sink.Count()
	if n1 == 0 {
		t.Fatal("no span reached the Collector's output while it was up")
	}
	col.stop(t)
	before, _ := sink.Count()
	load("collector stopped", 8*time.Second)
	peakDuringOutage := ship.peakRSS()
	col = startCollector(t, cfg, addr)
	load("collector restarted", 6*time.Second)
	peak1 := ship.peakRSS()
	ship.stop(t)
	if !strings.Contains(ship.output(), "0 not delivered") {
		t.Errorf("the first shipper reported spans not delivered:\n%s", tail(ship.output(), 2000))
	}
	ship = startShipper(t, dir, shipArgs...)
	load("shipper restarted", 5*time.Second)
	for _, p := range phases {
		t.Log(p)
	}

	// The program: nothing dropped, every request answered.
	c, err := adminclient.New(svc.admin, adminclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Writer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	// A rotation at 1 MiB, unless a slow machine made less than 2 MiB.
	if w.Dropped != 0 || w.Files < 2 && w.Bytes > 2<<20 {
		t.Errorf("writer: %d records dropped, %d files for %d bytes (want none dropped and a rotation)", w.Dropped, w.Files, w.Bytes)
	}
	for _, p := range phases {
		if p.stats.Status[0] > 0 {
			t.Errorf("%s: %d requests got no answer", p.name, p.stats.Status[0])
		}
	}

	// Metrics: once the load is over the counters stand still, and a poll
	// after that carries exactly the admin endpoint's counts.
	stats, err := c.Stats(ctx(t), adminclient.StatsQuery{Sort: "id"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{}
	for _, s := range stats.Stats {
		if s.Count > 0 {
			want[tigrisexport.FunctionName(s.Signature)] = s.Count
		}
	}
	var got map[string]uint64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		got = lastDurationCounts(sink)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("metric counts after the load:\n got %v\nwant %v", got, want)
			break
		}
	}

	// Spans: the program stops (its writer flushes), the shipper sees its
	// process gone, sends the rest; then every record of the files is one
	// span with the parent Kieker's rule gives it.
	svc.stop(t)
	files := readTrace(t, trace)
	waitSpans(t, sink, ship, len(files.recs))
	peak2 := ship.peakRSS()
	ship.stop(t)
	checkSpans(t, sink, files, "petclinic")
	if t.Failed() {
		keep := filepath.Join(os.TempDir(), "tigris-export-failed-traces")
		os.RemoveAll(keep)
		if err := os.Rename(traces, keep); err == nil {
			t.Logf("the trace files are kept in %s", keep)
		}
	}
	if _, dups := sink.Count(); dups != 0 {
		t.Errorf("%d spans arrived twice", dups)
	}
	if m := regexp.MustCompile(`export: \d+ streams, \d+ records read, \d+ spans sent in \d+ requests, 0 not delivered, 0 pending`).FindString(ship.output()); m == "" {
		t.Errorf("the shipper's summary:\n%s", tail(ship.output(), 2000))
	}
	// Memory: --max-memory 16MiB; the Go heap limit is twice that plus
	// 32 MiB; what is left is the runtime and the binary.
	const bound = 160 << 20
	for _, rss := range []int64{peakDuringOutage, peak1, peak2} {
		if rss > bound {
			t.Errorf("shipper peak RSS %d MiB, above %d MiB", rss>>20, bound>>20)
		}
	}
	t.Logf("%d records in %d files → %d spans; %d spans when the Collector stopped; shipper peak RSS %d MiB (outage), %d MiB (first run), %d MiB (second run)",
		len(files.recs), w.Files, len(files.recs), before, peakDuringOutage>>20, peak1>>20, peak2>>20)
}

// lastDurationCounts are the counts of tigris.function.duration in the last
// metrics request received, by function.
func lastDurationCounts(sink *otlptest.Receiver) map[string]uint64 {
	reqs := sink.Metrics()
	out := map[string]uint64{}
	if len(reqs) == 0 {
		return out
	}
	for _, rm := range reqs[len(reqs)-1].ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != "tigris.function.duration" {
					continue
				}
				for _, p := range m.GetHistogram().GetDataPoints() {
					out[otlptest.Attrs(p.Attributes)["code.function.name"]] = p.Count
				}
			}
		}
	}
	return out
}

// traceFiles is what a stream's files hold.
type traceFiles struct {
	hdr    *writer.Header
	probes map[uint32]*writer.ProbeDef
	recs   []writer.Record
	links  []writer.Link
}

func readTrace(t *testing.T, path string) traceFiles {
	t.Helper()
	r, err := writer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := traceFiles{probes: map[uint32]*writer.ProbeDef{}}
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindHeader:
			if f.hdr == nil {
				f.hdr = it.Header
			}
		case writer.KindProbe:
			f.probes[it.Probe.ID] = it.Probe
		case writer.KindRecord:
			f.recs = append(f.recs, it.Record)
		case writer.KindLink:
			f.links = append(f.links, it.Link)
		}
	}
	if f.hdr == nil || len(f.recs) == 0 {
		t.Fatalf("%s: no header or no records", path)
	}
	return f
}

func waitSpans(t *testing.T, sink *otlptest.Receiver, ship *proc, n int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		got, _ := sink.Count()
		if got >= n {
			return
		}
		if time.Now().After(deadline) || ship.exited() {
			t.Fatalf("%d spans arrived of %d records", got, n)
		}
	}
}

// checkSpans compares the spans with the records: one span each, named by
// the function, with the parent of the call tree the records give, from
// service.
func checkSpans(t *testing.T, sink *otlptest.Receiver, f traceFiles, service string) {
	t.Helper()
	spans := sink.Spans()
	if len(spans) != len(f.recs) {
		t.Errorf("%d spans for %d records", len(spans), len(f.recs))
	}
	host, _ := os.Hostname()
	stream := f.hdr.Stream
	key := func(trace uint64, eoi uint32) string {
		tid, sid := tigrisexport.TraceID(stream, trace), tigrisexport.SpanID(stream, trace, eoi)
		return otlptest.Key(tid[:], sid[:])
	}
	names := map[string]int{}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, tr := range writer.BuildTraces(f.recs) {
		for i := range tr.Nodes {
			n := &tr.Nodes[i]
			r := &n.Record
			sp, ok := spans[key(r.Trace, r.EOI)]
			if !ok {
				report("no span for trace %d call %d", r.Trace, r.EOI)
				continue
			}
			name := tigrisexport.FunctionName(f.probes[r.Probe].Signature)
			names[name]++
			if sp.Name != name {
				report("trace %d call %d: name %q, want %q", r.Trace, r.EOI, sp.Name, name)
			}
			var parent string
			if n.Parent != nil {
				sid := tigrisexport.SpanID(stream, r.Trace, n.Parent.Record.EOI)
				parent = string(sid[:])
			}
			if string(sp.ParentSpanId) != parent {
				report("trace %d call %d (%s): parent %x, want %x", r.Trace, r.EOI, name, sp.ParentSpanId, parent)
			}
			if d := int64(sp.EndTimeUnixNano - sp.StartTimeUnixNano); d != r.TOut-r.TIn {
				report("trace %d call %d: duration %d, want %d", r.Trace, r.EOI, d, r.TOut-r.TIn)
			}
			if sp.Resource["service.name"] != service || sp.Resource["service.instance.id"] != tigrisexport.InstanceID(host, f.hdr.PID) {
				report("resource %v", sp.Resource)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d spans differ from the records", bad)
	}
	t.Logf("spans by name: %v", names)
}

// TestCollectorLinks runs the shop program (integration's ShopFiles) with
// every probe fine: Spawn starts three goroutines with a go statement, and
// each goroutine's trace (Fib) is linked to Spawn's trace. tigris export
// sends the file through a real Collector; each linked trace's root span
// arrives in its own trace with one OTLP link, to the span of the Spawn call
// that ran the go statement (writer's LinkedFrom), which arrives too.
func TestCollectorLinks(t *testing.T) {
	collector(t)
	dir := itest.NewModule(t, itest.ShopFiles)
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
	traces := filepath.Join(dir, "traces")
	trace := filepath.Join(traces, "shop.tgr")
	itest.RunProgram(t, inst, "TIGRIS_MODE=fine", "TIGRIS_OUT="+trace)
	f := readTrace(t, trace)
	if len(f.links) != 3 {
		t.Fatalf("%d links in the trace file, want 3 (one per goroutine Spawn starts)", len(f.links))
	}

	sink := otlptest.New(t)
	addr := freeAddr(t)
	startCollector(t, collectorConfig(t, dir, addr, sink.URL), addr)
	out := itest.Tigris(t, dir, nil, "export", "--once", "--endpoint", "http://"+addr, "--checkpoint", "none", "--service-name", "shop", traces)
	if !strings.Contains(out, "export: 3 links of goroutines to the calls that started them: 0 dropped, 0 with no call to point at") {
		t.Errorf("tigris export's summary:\n%s", out)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if n, _ := sink.Count(); n >= len(f.recs) {
			break
		}
		if time.Now().After(deadline) {
			n, _ := sink.Count()
			t.Fatalf("%d spans arrived of %d records", n, len(f.recs))
		}
	}
	checkSpans(t, sink, f, "shop")

	spans := sink.Spans()
	stream := f.hdr.Stream
	traceOf := map[uint64]*writer.Trace{}
	for _, tr := range writer.BuildTraces(f.recs) {
		traceOf[tr.ID] = tr
	}
	for _, l := range f.links {
		child, parent := traceOf[l.Trace], traceOf[l.Parent]
		if child == nil || parent == nil || len(child.Roots) != 1 {
			t.Fatalf("link %+v: child trace %v, parent trace %v", l, child, parent)
		}
		from := parent.LinkedFrom(&l)
		if from == nil || f.probes[from.Record.Probe].Name != "Spawn" {
			t.Fatalf("link %+v: linked from %+v, want the Spawn call", l, from)
		}
		ctid, csid := tigrisexport.TraceID(stream, l.Trace), tigrisexport.SpanID(stream, l.Trace, child.Roots[0].Record.EOI)
		root := spans[otlptest.Key(ctid[:], csid[:])]
		ptid, psid := tigrisexport.TraceID(stream, l.Parent), tigrisexport.SpanID(stream, l.Parent, from.Record.EOI)
		if root.Span == nil || len(root.Links) != 1 || string(root.Links[0].TraceId) != string(ptid[:]) || string(root.Links[0].SpanId) != string(psid[:]) {
			t.Errorf("trace %d: root span %v, want one link to trace %x span %x", l.Trace, root.Span, ptid, psid)
			continue
		}
		if sp, ok := spans[otlptest.Key(ptid[:], psid[:])]; !ok || !strings.HasSuffix(sp.Name, ".Spawn") {
			t.Errorf("trace %d: the linked span %x arrived %v, named %q; want Spawn", l.Trace, psid, ok, sp.Name)
		}
	}
}
