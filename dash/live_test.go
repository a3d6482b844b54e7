package dash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// fakeProgram is an admin endpoint whose program runs forever: every
// reading finds more calls, more records and one more analysis cycle (the
// program keeps the last 100, as the real one does), and the recent records
// are a trace of their own each time.
type fakeProgram struct {
	mu     sync.Mutex
	probes int
	pid    int
	reads  int
	cycles []analyzer.Cycle
	recent []byte
	uptime float64
	// sampling is what GET sampling answers and health repeats; why is every
	// new cycle's explanation of an empty selection.
	sampling admin.SamplingState
	why      string
	binary   string // what health names; "" for an older program
}

func newFakeProgram(t *testing.T, probes int) (*fakeProgram, string) {
	p := &fakeProgram{probes: probes, pid: 100, recent: recentTrace(t, probes),
		sampling: admin.SamplingState{Sampling: 1, Percent: "100%", Effective: 1, EffectivePercent: "100%"}}
	mux := http.NewServeMux()
	reply := func(path string, f func() any) {
		mux.HandleFunc("GET "+admin.Prefix+path, func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			v := f()
			p.mu.Unlock()
			json.NewEncoder(w).Encode(v)
		})
	}
	reply("health", func() any {
		p.reads++
		p.uptime += 3
		c := analyzer.Cycle{Seq: p.reads, At: time.Unix(int64(p.reads), 0), Selected: []string{sig(p.reads % probes)}, Candidates: probes, Sampling: p.sampling.Effective}
		if p.why != "" {
			c.Selected, c.Why = nil, p.why
		}
		p.cycles = append(p.cycles, c)
		if len(p.cycles) > 100 {
			p.cycles = p.cycles[1:]
		}
		return admin.Health{Status: "ok", PID: p.pid, UptimeSeconds: p.uptime, Probes: probes, Modes: map[settings.Mode]int{settings.Coarse: probes},
			Sampling: p.sampling.Sampling, EffectiveSampling: p.sampling.Effective, SamplingReason: p.sampling.Reason, Binary: p.binary}
	})
	reply("stats", func() any {
		l := admin.StatsList{Sort: "total", Order: "desc", Matched: probes}
		for i := range probes {
			n := uint64(p.reads * (i + 1) * 10)
			l.Stats = append(l.Stats, admin.StatsRow{Stats: monitor.Stats{ID: uint32(i + 1), Signature: sig(i), Mode: settings.Coarse, Count: n, MeanNs: 1000}, TotalNs: float64(n) * 1000})
		}
		return l
	})
	reply("probes", func() any {
		var l admin.ProbeList
		for i := range probes {
			l.Probes = append(l.Probes, monitor.ProbeStatus{ID: uint32(i + 1), Signature: sig(i), File: "f.go", Line: i})
		}
		return l
	})
	reply("rules", func() any { return admin.RuleList{Configured: []settings.Rule{}, Manual: []settings.Rule{}} })
	reply("sampling", func() any { return p.sampling })
	reply("analysis", func() any { return settings.Default().Analysis })
	reply("analysis/history", func() any { return admin.HistoryList{Cycles: p.cycles} })
	reply("writer", func() any {
		return admin.WriterState{Active: true, Written: uint64(p.reads * 1000), Queued: uint64(p.reads % 7), CurrentFile: "/x.tgr"}
	})
	mux.HandleFunc("POST "+admin.Prefix+"auth", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(admin.AuthState{Authorized: true})
	})
	mux.HandleFunc("GET "+admin.Prefix+"writer/recent", func(w http.ResponseWriter, r *http.Request) {
		w.Write(p.recent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func sig(i int) string { return fmt.Sprintf("example.com/app.F%d(int) error", i) }

// recentTrace is a trace of 200 call trees over the fake program's probes.
func recentTrace(t *testing.T, probes int) []byte {
	path := filepath.Join(t.TempDir(), "recent.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, Binary: "/srv/app"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range probes {
		w.Define(writer.ProbeDef{ID: uint32(i + 1), Signature: sig(i), File: "f.go", Line: i})
	}
	for tr := uint64(1); tr <= 200; tr++ {
		t0 := int64(tr) * 10000
		w.Write(&writer.Record{Probe: uint32(tr%uint64(probes)) + 1, EOI: 1, ESS: 1, Trace: tr, GID: 1, TIn: t0 + 100, TOut: t0 + 900})
		w.Write(&writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: tr, GID: 1, TIn: t0, TOut: t0 + 1000 + int64(tr)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLiveMemoryBounded reads a program that runs "for an hour" (1200
// readings 3 s apart on a simulated clock, with the page looked at all the
// time): what the dashboard holds after the hour is what it held after a
// few minutes, since every series keeps its last Windows readings, the
// history is the program's last 100 cycles and the recent records are
// replaced.
func TestLiveMemoryBounded(t *testing.T) {
	const probes, windows = 40, 60
	_, addr := newFakeProgram(t, probes)
	c, err := adminclient.New(addr, adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_700_000_000, 0)
	l := NewLive(c, addr, LiveOptions{Refresh: 3 * time.Second, Windows: windows, Now: func() time.Time { return clock }})
	ctx := context.Background()
	read := func(n int) {
		for range n {
			l.View(ctx, Query{}) // someone looks at the page: recent records are read too
			l.Read(ctx)
			clock = clock.Add(3 * time.Second)
		}
	}
	measure := func() (points, funcs, cycles, trees int, heapInUse uint64) {
		points, funcs = l.footprint()
		v := l.View(ctx, Query{All: true})
		for _, r := range v.Functions.Rows {
			if len(r.Series) > windows {
				t.Errorf("%s: %d points in its series, more than %d windows", r.Signature, len(r.Series), windows)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return points, funcs, len(v.Analyzer.Cycles), len(v.Traces.List), ms.HeapAlloc
	}
	read(200) // 10 minutes
	p1, f1, c1, t1, h1 := measure()
	read(1000) // 60 minutes in all
	p2, f2, c2, t2, h2 := measure()
	t.Logf("after 10 min: %d points, %d functions, %d cycles, %d trees, heap %d kB; after 60 min: %d, %d, %d, %d, heap %d kB",
		p1, f1, c1, t1, h1>>10, p2, f2, c2, t2, h2>>10)
	if want := (probes + 3) * windows; p1 != want || p2 != want {
		t.Errorf("points held: %d after 10 min, %d after 60 (want %d both: %d functions and 3 writer series of %d windows)", p1, p2, want, probes, windows)
	}
	if f1 != probes || f2 != probes || c1 != 100 || c2 != 100 || t1 != t2 || t2 == 0 {
		t.Errorf("functions %d/%d, cycles %d/%d, trees %d/%d: want %d functions and 100 cycles both times, and the same trees", f1, f2, c1, c2, t1, t2, probes)
	}
}

// TestLiveRestart: a new program at the same address (another pid) starts
// the series afresh rather than mixing two programs' counts.
func TestLiveRestart(t *testing.T) {
	p, addr := newFakeProgram(t, 5)
	c, _ := adminclient.New(addr, adminclient.Options{})
	l := NewLive(c, addr, LiveOptions{Windows: 10})
	ctx := context.Background()
	for range 6 {
		l.Read(ctx)
	}
	if pts, _ := l.footprint(); pts != (5+3)*5 {
		t.Fatalf("%d points after 6 readings of 5 functions and the writer, want 40", pts)
	}
	p.mu.Lock()
	p.pid, p.uptime = 101, 0
	p.mu.Unlock()
	l.Read(ctx)
	if pts, funcs := l.footprint(); pts != 0 || funcs != 5 {
		t.Errorf("after a restart: %d points, %d functions; want 0 and 5", pts, funcs)
	}
}

// TestLiveWindows: a window's calls and mean are the difference of two
// readings of the totals.
func TestLiveWindows(t *testing.T) {
	_, addr := newFakeProgram(t, 3)
	c, _ := adminclient.New(addr, adminclient.Options{})
	l := NewLive(c, addr, LiveOptions{})
	ctx := context.Background()
	for range 4 {
		l.Read(ctx)
	}
	v := l.View(ctx, Query{Sort: "name"})
	for _, r := range v.Functions.Rows {
		var i int
		fmt.Sscanf(r.Signature, "example.com/app.F%d", &i)
		if len(r.Series) != 3 {
			t.Fatalf("%s: %d windows after 4 readings", r.Signature, len(r.Series))
		}
		for j, n := range r.Series {
			if n != float64((i+1)*10) || r.SeriesMean[j] != 1000 {
				t.Errorf("%s window %d: %v calls, mean %v; want %d calls of 1µs", r.Signature, j, n, r.SeriesMean[j], (i+1)*10)
			}
		}
	}
}

// TestLivePageSections: the page on a program that has run a while shows
// every section the dashboard promises (docs/dashboard.md, "What the page
// shows"): functions with their histograms and sparklines, the analyzer's
// phase, selections per cycle and history, the modes with their forms, call
// trees as flame graphs with their downloads, and the writer's buffer.
func TestLivePageSections(t *testing.T) {
	_, addr := newFakeProgram(t, 5)
	c, err := adminclient.New(addr, adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_700_000_000, 0)
	l := NewLive(c, addr, LiveOptions{Refresh: 3 * time.Second, Now: func() time.Time { return clock }})
	for range 5 {
		l.View(context.Background(), Query{}) // looked at: the recent records are read
		l.Read(context.Background())
		clock = clock.Add(3 * time.Second)
	}
	_, page := get(t, dashOf(t, l, Options{})+"/")
	for what, re := range map[string]string{
		"a row per function":         `(?s)(<tr data-signature="example\.com/app\.F\d\(int\) error" data-calls="[1-9]\d*".*){5}`,
		"latency histograms":         `<svg class="hist"`,
		"sparklines of calls":        `(?s)id="functions".*<svg class="spark"`,
		"the analyzer's phase":       `<p class="phase"><strong>[^<]+</strong>`,
		"selections per cycle":       `<svg class="timeline"`,
		"the history of cycles":      `<details id="cycles"><summary>History of \d+ cycles`,
		"the rule and rate forms":    `(?s)id="rule-pattern".*id="rate"`,
		"flame graphs":               `<svg class="flame"`,
		"Perfetto and pprof links":   `href="/download\?format=chrome[^"]*".*href="/download\?format=pprof`,
		"the writer's buffer":        `(?s)id="writer".*<dt>Buffer</dt><dd>[0-9,]+</dd>`,
		"the writer's written count": `(?s)id="writer".*<dt>Written</dt><dd>[0-9,]+</dd>`,
	} {
		if !regexp.MustCompile(re).MatchString(page) {
			t.Errorf("the page lacks %s (/%s/)", what, re)
		}
	}
}

// TestLiveFirstPage: the first page after tigris dash ADDR shows what the
// program has, though nobody looked before: the recent records (histograms,
// call trees) and the program's name, not "none yet" and the address; and a
// page on a program never read yet reads it first.
func TestLiveFirstPage(t *testing.T) {
	for _, readFirst := range []bool{true, false} {
		_, addr := newFakeProgram(t, 5)
		c, err := adminclient.New(addr, adminclient.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l := NewLive(c, addr, LiveOptions{Refresh: time.Hour}) // no second reading during the test
		if readFirst {
			l.Read(context.Background()) // as tigris dash does before it serves
		}
		began := time.Now()
		_, page := get(t, dashOf(t, l, Options{})+"/")
		if took := time.Since(began); took > firstWait {
			t.Errorf("the first page took %v, more than %v", took, firstWait)
		}
		for what, re := range map[string]string{
			"the program's name":  `<title>tigris dash · app</title>`,
			"its functions":       `(?s)(<tr data-signature="example\.com/app\.F\d\(int\) error".*){5}`,
			"latency histograms":  `<svg class="hist"`,
			"a call tree":         `<svg class="flame"`,
			"the recent records'": `the program.{0,5}s last [0-9,]+ fine records`,
		} {
			if !regexp.MustCompile(re).MatchString(page) {
				t.Errorf("read first %v: the first page lacks %s (/%s/)", readFirst, what, re)
			}
		}
		if strings.Contains(page, "none yet") || strings.Contains(page, "No fine records yet") {
			t.Errorf("read first %v: the first page says there are no fine records", readFirst)
		}
	}
}

// TestLiveNameFromHealth: the program's name comes with its first reading
// (health names the binary), before any record was read.
func TestLiveNameFromHealth(t *testing.T) {
	p, addr := newFakeProgram(t, 2)
	p.mu.Lock()
	p.binary = "/opt/bin/shopd"
	p.mu.Unlock()
	c, _ := adminclient.New(addr, adminclient.Options{})
	l := NewLive(c, addr, LiveOptions{})
	l.Read(context.Background())
	l.mu.Lock()
	l.recent = &recentWindow{at: time.Now(), err: errors.New("not read in this test")}
	l.mu.Unlock()
	if v := l.View(context.Background(), Query{}); v.Title != "shopd" || v.Process.Binary != "/opt/bin/shopd" {
		t.Errorf("title %q, binary %q; want shopd, /opt/bin/shopd", v.Title, v.Process.Binary)
	}
}
