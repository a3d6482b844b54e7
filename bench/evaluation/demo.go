package evaluation

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/export"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/traceconv"

	"github.com/tigrisgo/tigris/internal/sorted"
)

// DemoOptions are the knobs of Demo; `tigris demo`'s flags set them.
type DemoOptions struct {
	// Tigris is the tigris executable that builds the service.
	Tigris string
	// Duration is how long the simulated users load the service.
	Duration time.Duration
	// Interval is the analysis interval.
	Interval time.Duration
	// Sampling is the sampling rate of the selected functions, e.g. "10%"
	// (the ceiling when a budget is set); Budget the share of CPU time fine
	// tracing may take, e.g. "1%", or "off".
	Sampling, Budget string
	// Out receives the binary, the trace and its conversions; "" uses a
	// temporary directory, removed at the end.
	Out string
	// Seed seeds the simulated users.
	Seed uint64
	// Export, when set, is an OTLP/HTTP endpoint ("http://127.0.0.1:4318"):
	// the demo runs tigris export's shipper beside the service and sends
	// the trace's spans and the statistics there (docs/export.md).
	Export string
	// Convert converts the trace file to a format of traceconv (pprof,
	// chrome) at its default output name, reporting on the demo's output
	// what it wrote; tigris demo passes tigris convert.
	Convert func(format, trace string) error
}

// Demo runs the whole story on the example service, found upward from the
// current directory: it builds the service with tigris, starts it with the
// analyzer on, loads it for o.Duration while printing each analysis cycle,
// prints the phase-1 statistics, the selections and the writer's counters,
// then stops the service and converts its trace. The story goes to stdout,
// progress to stderr (a line redrawn in place on a terminal). The service is
// stopped whatever happens.
func Demo(ctx context.Context, stdout, stderr io.Writer, o DemoOptions) error {
	example, err := findPetclinic()
	if err != nil {
		return err
	}
	dir := o.Out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "tigris-demo-"); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	say := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }

	// 1. Build.
	bin := filepath.Join(dir, "petclinic")
	say("== 1. Building examples/petclinic with tigris (probes in the service and repository layers)")
	start := time.Now()
	build := exec.CommandContext(ctx, o.Tigris, "go", "build", "-o", bin, "./cmd/petclinic")
	build.Dir = example
	build.Env = buildEnv()
	if err := runWithTicker(build, stderr, "building"); err != nil {
		return fmt.Errorf("demo: building petclinic: %w", err)
	}
	say("   built %s in %s", bin, time.Since(start).Round(100*time.Millisecond))

	// 2. Start.
	trace := filepath.Join(dir, "petclinic.tgr")
	if err := os.Remove(trace); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("demo: removing the previous trace: %w", err)
	}
	// With --export the users' requests carry traceparent headers and the
	// service joins their traces (demojoin.go).
	var svcArgs []string
	var spans *clientSpans
	if o.Export != "" {
		svcArgs, spans = []string{"-trace-context"}, &clientSpans{}
	}
	svc, err := startService(ctx, bin, dir, true, []string{
		"TIGRIS_ADMIN=127.0.0.1:0",
		"TIGRIS_MODE=coarse",
		"TIGRIS_ANALYSIS=on",
		"TIGRIS_INTERVAL=" + o.Interval.String(),
		"TIGRIS_SAMPLING=" + o.Sampling,
		"TIGRIS_BUDGET=" + o.Budget,
		"TIGRIS_WRITER=async",
		"TIGRIS_OUT=" + trace,
	}, -1, svcArgs...)
	if err != nil {
		return err
	}
	defer svc.kill()
	say("== 2. PetClinic on %s, admin endpoint on %s", svc.url, svc.admin)
	say("   phase 1: every probe coarse; the analyzer runs every %s", o.Interval)
	var shipped func() export.Stats
	if o.Export != "" {
		shipped = startExport(ctx, stderr, o.Export, svc.admin, trace)
		say("   tigris export sends the spans and statistics to %s (service.name petclinic)", o.Export)
		say("   the users' requests carry W3C traceparent headers; petclinic -trace-context joins their traces")
	}
	c, err := adminclient.New(svc.admin, adminclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	// 3. Load, with analysis cycles reported as they happen. On a terminal the
	// progress line redraws itself; elsewhere (CI logs) it is a line every 10s.
	tty := isTerminal(stderr)
	clearLine := func() {
		if tty {
			fmt.Fprint(stderr, "\r\033[K")
		}
	}
	say("== 3. Simulated users for %s (5–20 users, three navigation patterns)", o.Duration)
	var mu sync.Mutex // one writer to the terminal at a time
	seen := 0
	showCycles := func() {
		cycles, err := c.History(ctx)
		if err != nil {
			return
		}
		for _, cy := range cycles[min(seen, len(cycles)):] {
			mu.Lock()
			clearLine()
			printDemoCycle(stdout, &cy)
			mu.Unlock()
		}
		seen = max(seen, len(cycles))
	}
	lo := loadgen.Options{
		BaseURL:  svc.url,
		Duration: o.Duration,
		Seed:     o.Seed,
		Progress: func(s loadgen.Stats) {
			showCycles()
			if !tty && int(s.Elapsed.Seconds())%10 != 0 {
				return
			}
			mu.Lock()
			clearLine()
			fmt.Fprintf(stderr, "   %s %3.0fs/%.0fs  %6d requests  %4.0f req/s  %2d users  %d errors",
				bar(s.Elapsed, o.Duration), s.Elapsed.Seconds(), o.Duration.Seconds(), s.Requests, s.CurrentThroughput, s.Users, s.Errors)
			if !tty {
				fmt.Fprintln(stderr)
			}
			mu.Unlock()
		},
	}
	if spans != nil {
		lo.Trace = spans.trace
	}
	stats, err := loadgen.Run(ctx, lo)
	clearLine()
	if err != nil {
		return fmt.Errorf("demo: load: %w", err)
	}
	showCycles()
	say("   %d requests in %s (%s), latency p50 %s p99 %s, %d answered with an error status %s",
		stats.Requests, stats.Elapsed.Round(time.Second), human.Rate(stats.Throughput, "req"),
		human.Duration(stats.Latency.P50), human.Duration(stats.Latency.P99), stats.Errors, errorStatuses(stats.Status))

	// 4. The story so far.
	if err := demoReport(ctx, stdout, c); err != nil {
		return err
	}

	// 5. Stop and convert.
	say("== 5. Stopping the service (SIGTERM: the monitor flushes the trace) and converting it")
	if err := svc.stop(10 * time.Second); err != nil {
		return err
	}
	if shipped != nil {
		st := shipped()
		say("   export: %d spans sent, %d not delivered, %d pending; %d metric requests sent to %s",
			st.SpansSent, st.SpansFailed, st.SpansPending, st.MetricsSent, o.Export)
	}
	for _, to := range []string{"pprof", "chrome"} {
		if err := o.Convert(to, trace); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if spans != nil {
		// 6. One request's trace, with the users' client spans sent beside
		// tigris's.
		joined, top, calls, err := joinedTraces(trace, spans)
		if err != nil {
			return fmt.Errorf("demo: reading the joined traces: %w", err)
		}
		if err := sendClientSpans(ctx, o.Export, joined); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		printJoinedTrace(stdout, len(joined), top, calls)
	}
	demoClosing(stdout, trace, o.Out != "")
	return nil
}

// demoClosing says how to open the trace and its conversions, and ends with
// the command that shows the run in tigris dash.
func demoClosing(stdout io.Writer, trace string, kept bool) {
	say := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	pprofOut, chromeOut := traceconv.Pprof.DefaultOutput(trace), traceconv.Chrome.DefaultOutput(trace)
	say("")
	say("Open them:")
	say("   go tool pprof -top %s", pprofOut)
	say("   go tool pprof -http=127.0.0.1:0 %s      # flame graph in the browser", pprofOut)
	say("   https://ui.perfetto.dev  →  Open trace file  →  %s", chromeOut)
	say("   go run ./cmd/tigris stats %s            # per-function table of the fine records", trace)
	if !kept {
		say("(these files are removed now; --out DIR keeps them)")
		return
	}
	say("")
	say("See the whole run in the browser (functions, latencies, the analyzer's choices, call trees):")
	say("   go run ./cmd/tigris dash --open %s", trace)
}

// startExport runs the shipper of tigris export beside the service; the
// function it returns waits (up to 30s) until the stopped service's trace is
// sent, stops the shipper and returns its counters.
func startExport(ctx context.Context, stderr io.Writer, endpoint, admin, trace string) func() export.Stats {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var last export.Stats
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, err := export.Run(ctx, export.Options{
			Traces: []string{trace}, Admin: admin, Endpoint: endpoint, ServiceName: "petclinic",
			MetricsEvery: 5 * time.Second, Version: "demo",
			Logf:    func(format string, args ...any) { fmt.Fprintf(stderr, "   tigris: "+format+"\n", args...) },
			OnStats: func(s export.Stats) { mu.Lock(); last = s; mu.Unlock() },
		})
		if err != nil {
			fmt.Fprintf(stderr, "   tigris: %v\n", err)
		}
		mu.Lock()
		last = st
		mu.Unlock()
	}()
	return func() export.Stats {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			mu.Lock()
			s := last
			mu.Unlock()
			if s.Streams > 0 && s.Ended == s.Streams && s.SpansPending == 0 {
				break
			}
		}
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// demoReport prints the phase-1 statistics, the analysis cycles and the writer.
func demoReport(ctx context.Context, stdout io.Writer, c *adminclient.Client) error {
	say := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	l, err := c.Stats(ctx, adminclient.StatsQuery{Sort: "total", Top: 10})
	if err != nil {
		return fmt.Errorf("demo: reading statistics: %w", err)
	}
	say("== 4. Phase 1: coarse statistics, top %d of %d functions by total time", len(l.Stats), l.Matched)
	tw := newTable(stdout)
	fmt.Fprintln(tw, "   MODE\tCALLS\tMEAN\tTOTAL\tERRORS\tFUNCTION")
	for _, s := range l.Stats {
		fmt.Fprintf(tw, "   %s\t%d\t%s\t%s\t%d\t%s\n", s.Mode, s.Count, human.Ns(s.MeanNs), human.Ns(s.TotalNs), s.Errors, shortSig(s.Signature))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	cycles, err := c.History(ctx)
	if err != nil {
		return fmt.Errorf("demo: reading the analysis history: %w", err)
	}
	say("")
	say("   Phase 2: %d analysis cycle(s); the last selection is traced in detail.", len(cycles))
	if n := len(cycles); n > 0 {
		last := cycles[n-1]
		say("   selected now (%d): %s", len(last.Selected), strings.Join(mapSlice(last.Selected, shortSig), ", "))
		say("   sampling rate in force: %s", human.Percent(last.Sampling))
	} else {
		say("   (no cycle yet: run longer than --interval)")
	}
	w, err := c.Writer(ctx)
	if err != nil {
		return fmt.Errorf("demo: reading the writer state: %w", err)
	}
	say("   trace writer: %d records written, %d dropped, %d queued, %s in %s",
		w.Written, w.Dropped, w.Queued, human.Bytes(int64(w.Bytes)), cmp.Or(w.CurrentFile, "(not opened)"))
	return nil
}

// printDemoCycle prints one analysis cycle as it happens: the selection and
// its change, and the budget controller's decision.
func printDemoCycle(stdout io.Writer, cy *adminclient.Cycle) {
	if cy.Err != "" {
		fmt.Fprintf(stdout, "   cycle %d: failed: %s\n", cy.Seq, cy.Err)
		return
	}
	fmt.Fprintf(stdout, "   cycle %d at %s: %d candidates → %d selected (+%d −%d), sampling %s\n",
		cy.Seq, cy.At.Format("15:04:05"), cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), human.Percent(cy.Sampling))
	if b := cy.Budget; b != nil {
		fmt.Fprintf(stdout, "     budget %s of CPU: %s at %s + %s per record → predicted %s, sampling %s (%s)\n",
			human.Percent(b.Budget), human.Rate(b.FineCallsPerSec, "fine calls"), human.Ns(b.Cost.CallNs), human.Ns(b.Cost.RecordNs),
			human.Percent(b.Share), b.Action, human.Percent(b.Rate))
		// What the previous decision led to: the records actually made since
		// the previous cycle, at the calibrated cost.
		fmt.Fprintf(stdout, "     measured since the previous cycle: %s → records took %s of CPU\n",
			human.Rate(b.RecordsPerSec, "records"), human.Percent(b.RecordsPerSec*b.Cost.RecordNs/(float64(max(b.Procs, 1))*1e9)))
	}
	for _, s := range cy.Added {
		fmt.Fprintf(stdout, "     + %s  (%s)\n", shortSig(s), strings.Join(cy.Reasons[s], "; "))
	}
	for _, s := range cy.Removed {
		fmt.Fprintf(stdout, "     − %s\n", shortSig(s))
	}
}

// shortSig drops the example's module prefix from a signature for reading.
func shortSig(s string) string {
	return strings.ReplaceAll(s, "github.com/tigrisgo/tigris/examples/petclinic/internal/", "")
}

// errorStatuses renders the non-2xx statuses, e.g. "(404: 30, 400: 5)".
func errorStatuses(m map[int]int64) string {
	var parts []string
	for _, code := range sorted.Keys(m) {
		if code < 200 || code > 299 {
			parts = append(parts, fmt.Sprintf("%d: %d", code, m[code]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + "; the users look up and validate some records that do not exist)"
}

// newTable aligns the demo's tables.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// mapSlice applies f to every element of ss.
func mapSlice(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// bar draws how much of total is done, for the progress line.
func bar(done, total time.Duration) string {
	const width = 24
	n := 0
	if total > 0 {
		n = min(width, int(float64(width)*done.Seconds()/total.Seconds()))
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}
