package export

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// moobenchFile writes n records of MooBench's stress traces (a recursion of
// depth 10, records written at exit, deepest first) to a trace file.
func moobenchFile(b testing.TB, path string, n int) {
	b.Helper()
	w, err := writer.NewSync(writer.Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	const depth = 10
	for p := uint32(0); p < depth; p++ {
		w.Define(writer.ProbeDef{ID: p + 1, Signature: fmt.Sprintf("moobench.io/bench.(*MonitoredClass).MonitoredMethod%d(int64, int) int64", p),
			Package: "moobench.io/bench", Recv: "MonitoredClass", Name: fmt.Sprintf("MonitoredMethod%d", p), File: "/src/moobench.io/bench/monitored.go", Line: 20 + int(p)})
	}
	var t0 int64 = 1_000_000
	for trace := uint64(1); n > 0; trace++ {
		for d := depth - 1; d >= 0 && n > 0; d-- {
			r := writer.Record{Probe: uint32(d + 1), EOI: uint32(d), ESS: uint32(d), Trace: trace, GID: 7,
				TIn: t0 + int64(15*d), TOut: t0 + int64(300-15*d)}
			w.Write(&r)
			n--
		}
		t0 += 400
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// discard is a receiver that reads and drops every request: what is left to
// measure is the shipper.
type discard struct{}

func (discard) RoundTrip(req *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, req.Body)
	req.Body.Close()
	return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkShip exports a file of 2 million MooBench records with Once:
// reading, trace assembly, encoding and posting, on GOMAXPROCS=1. "discard"
// posts to a transport that reads and drops the bodies; "loopback" posts
// over HTTP to a receiver that does the same in another process (this test
// binary started again), so the CPU time measured is the shipper's alone.
// spans/s is wall time, spans/cpu-s the shipper's CPU time.
func BenchmarkShip(b *testing.B) {
	const n = 2_000_000
	dir := b.TempDir()
	path := filepath.Join(dir, "moobench.tgr")
	moobenchFile(b, path, n)
	run := func(b *testing.B, o Options) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		o.Traces, o.Once = []string{path}, true
		var wall, cpu time.Duration
		for i := 0; i < b.N; i++ {
			start, c0 := time.Now(), cpuTime()
			st, err := Run(context.Background(), o)
			wall, cpu = wall+time.Since(start), cpu+cpuTime()-c0
			if err != nil || st.SpansSent != n {
				b.Fatalf("%v, stats %+v", err, st)
			}
		}
		b.ReportMetric(float64(n*b.N)/wall.Seconds(), "spans/s")
		b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "spans/cpu-s")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("discard", func(b *testing.B) {
		run(b, Options{Endpoint: "http://discard.invalid", Transport: discard{}})
	})
	b.Run("loopback", func(b *testing.B) {
		run(b, Options{Endpoint: sinkProcess(b)})
	})
	b.Run("loopback-gzip", func(b *testing.B) {
		run(b, Options{Endpoint: sinkProcess(b), Gzip: true})
	})
}

// sinkProcess starts this test binary again as an OTLP/HTTP receiver that
// drops what it receives (see TestMain), so that the shipper's CPU time is
// its own, and returns its URL.
func sinkProcess(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), sinkEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("sink: %v", err)
	}
	return strings.TrimSpace(line)
}

const sinkEnv = "TIGRIS_EXPORT_BENCH_SINK"

// TestMain runs the benchmark's sink when sinkEnv is set.
func TestMain(m *testing.M) {
	if os.Getenv(sinkEnv) == "" {
		os.Exit(m.Run())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	fmt.Println(srv.URL)
	select {}
}
