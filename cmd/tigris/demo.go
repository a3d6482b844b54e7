package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/traceconv"
)

// demoOptions are the knobs of `tigris demo`.
type demoOptions struct {
	duration time.Duration
	interval time.Duration
	sampling string
	budget   string
	out      string
	seed     uint64
}

func newDemoCmd() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Build the bundled PetClinic service with tigris, load it, and show both phases",
		Long: `demo runs the whole story on the example service in examples/petclinic:

 1. builds it with "tigris go build" (the first build recompiles the standard
    library with probes in place: a minute or two on a small machine);
 2. starts it with the admin endpoint on a free loopback port, every probe of the
    service and repository layers coarse (phase 1), and the analyzer evaluating
    "(more frequent ∪ most expensive) ∩ least changeable" every --interval;
 3. drives it with simulated users (5 to 20, three navigation patterns) for
    --duration, showing progress and each analysis cycle as it happens: which
    functions were selected for fine tracing (phase 2), and why;
 4. prints the phase-1 statistics, the selections, the sampling rate and what
    the trace writer wrote and dropped;
 5. stops the service, converts its trace to pprof and to Chrome trace events,
    and says how to open them.

Run it from the tigris repository. The binary, the trace and its conversions
go to --out (./tigris-demo); the service is stopped whatever happens.`,
		Example: `  go run ./cmd/tigris demo
  go run ./cmd/tigris demo --duration 20s --interval 5s --out /tmp/tigris-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runDemo(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.duration, "duration", time.Minute, "how long to drive load")
	f.DurationVar(&o.interval, "interval", 10*time.Second, "analysis interval")
	f.StringVar(&o.sampling, "sampling", "10%", "sampling rate of the selected functions (the ceiling when a budget is set)")
	f.StringVar(&o.budget, "budget", "off", "share of CPU time fine tracing may take, e.g. 1%; the analyzer lowers the sampling rate to stay inside")
	f.StringVar(&o.out, "out", "tigris-demo", "directory for the binary, the trace and its conversions (\"\": a temporary one, removed at the end)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the simulated users")
	return cmd
}

func runDemo(ctx context.Context, stdout, stderr io.Writer, o demoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: finding the tigris executable: %w", err)
	}
	example, err := findPetclinic()
	if err != nil {
		return err
	}
	dir := o.out
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
	build := exec.CommandContext(ctx, exe, "go", "build", "-o", bin, "./cmd/petclinic")
	build.Dir = example
	build.Env = demoBuildEnv()
	if err := runWithTicker(build, stderr, "building"); err != nil {
		return fmt.Errorf("demo: building petclinic: %w", err)
	}
	say("   built %s in %s", bin, time.Since(start).Round(100*time.Millisecond))

	// 2. Start.
	trace := filepath.Join(dir, "petclinic.tgr")
	if err := os.Remove(trace); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("demo: removing the previous trace: %w", err)
	}
	svc, err := startService(ctx, bin, dir, true, []string{
		"TIGRIS_ADMIN=127.0.0.1:0",
		"TIGRIS_MODE=coarse",
		"TIGRIS_ANALYSIS=on",
		"TIGRIS_INTERVAL=" + o.interval.String(),
		"TIGRIS_SAMPLING=" + o.sampling,
		"TIGRIS_BUDGET=" + o.budget,
		"TIGRIS_WRITER=async",
		"TIGRIS_OUT=" + trace,
	})
	if err != nil {
		return err
	}
	defer svc.kill()
	say("== 2. PetClinic on %s, admin endpoint on %s", svc.url, svc.admin)
	say("   phase 1: every probe coarse; the analyzer runs every %s", o.interval)
	c, err := adminclient.New(svc.admin, adminclient.Options{Timeout: 5 * time.Second})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	// 3. Load, with analysis cycles reported as they happen. On a terminal the
	// progress line redraws itself; elsewhere (CI logs) it is a line every 10s.
	tty := isTerminal(stderr)
	clear := func() {
		if tty {
			fmt.Fprint(stderr, "\r\033[K")
		}
	}
	say("== 3. Simulated users for %s (5–20 users, three navigation patterns)", o.duration)
	var mu sync.Mutex // one writer to the terminal at a time
	seen := 0
	showCycles := func() {
		cycles, err := c.History(ctx)
		if err != nil {
			return
		}
		for _, cy := range cycles[min(seen, len(cycles)):] {
			mu.Lock()
			clear()
			printDemoCycle(stdout, &cy)
			mu.Unlock()
		}
		seen = max(seen, len(cycles))
	}
	stats, err := loadgen.Run(ctx, loadgen.Options{
		BaseURL:  svc.url,
		Duration: o.duration,
		Seed:     o.seed,
		Progress: func(s loadgen.Stats) {
			showCycles()
			if !tty && int(s.Elapsed.Seconds())%10 != 0 {
				return
			}
			mu.Lock()
			clear()
			fmt.Fprintf(stderr, "   %s %3.0fs/%.0fs  %6d requests  %4.0f req/s  %2d users  %d errors",
				bar(s.Elapsed, o.duration), s.Elapsed.Seconds(), o.duration.Seconds(), s.Requests, s.CurrentThroughput, s.Users, s.Errors)
			if !tty {
				fmt.Fprintln(stderr)
			}
			mu.Unlock()
		},
	})
	clear()
	if err != nil {
		return fmt.Errorf("demo: load: %w", err)
	}
	showCycles()
	say("   %d requests in %s (%.0f req/s), latency p50 %s p99 %s, %d answered with an error status %s",
		stats.Requests, stats.Elapsed.Round(time.Second), stats.Throughput,
		stats.Latency.P50.Round(time.Microsecond), stats.Latency.P99.Round(time.Microsecond), stats.Errors, errorStatuses(stats.Status))

	// 4. The story so far.
	if err := demoReport(ctx, stdout, c); err != nil {
		return err
	}

	// 5. Stop and convert.
	say("== 5. Stopping the service (SIGTERM: the monitor flushes the trace) and converting it")
	if err := svc.stop(10 * time.Second); err != nil {
		return err
	}
	for _, to := range []string{"pprof", "chrome"} {
		if err := runConvert(io.Discard, stdout, to, "", []string{trace}); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	pprofOut, chromeOut := traceconv.Pprof.DefaultOutput(trace), traceconv.Chrome.DefaultOutput(trace)
	say("")
	say("Open them:")
	say("   go tool pprof -top %s", pprofOut)
	say("   go tool pprof -http=127.0.0.1:0 %s      # flame graph in the browser", pprofOut)
	say("   https://ui.perfetto.dev  →  Open trace file  →  %s", chromeOut)
	say("   go run ./cmd/tigris stats %s            # per-function table of the fine records", trace)
	if o.out == "" {
		say("(these files are removed now; --out DIR keeps them)")
	}
	return nil
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
		say("   sampling rate in force: %.1f%%", 100*last.Sampling)
	} else {
		say("   (no cycle yet: run longer than --interval)")
	}
	w, err := c.Writer(ctx)
	if err != nil {
		return fmt.Errorf("demo: reading the writer state: %w", err)
	}
	say("   trace writer: %d records written, %d dropped, %d queued, %s in %s",
		w.Written, w.Dropped, w.Queued, human.Bytes(int64(w.Bytes)), cmpOr(w.CurrentFile, "(not opened)"))
	return nil
}

func printDemoCycle(stdout io.Writer, cy *adminclient.Cycle) {
	if cy.Err != "" {
		fmt.Fprintf(stdout, "   cycle %d: failed: %s\n", cy.Seq, cy.Err)
		return
	}
	fmt.Fprintf(stdout, "   cycle %d at %s: %d candidates → %d selected (+%d −%d), sampling %.1f%%\n",
		cy.Seq, cy.At.Format("15:04:05"), cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), 100*cy.Sampling)
	if b := cy.Budget; b != nil {
		fmt.Fprintf(stdout, "     budget %.2f%% of CPU: %.0f fine calls/s at %.1f ns + %.1f ns per record → predicted %.3f%%, sampling %s (%.2f%%)\n",
			100*b.Budget, b.FineCallsPerSec, b.Cost.CallNs, b.Cost.RecordNs, 100*b.Share, b.Action, 100*b.Rate)
		// What the previous decision led to: the records actually made since
		// the previous cycle, at the calibrated cost.
		fmt.Fprintf(stdout, "     measured since the previous cycle: %.0f records/s → records took %.3f%% of CPU\n",
			b.RecordsPerSec, 100*b.RecordsPerSec*b.Cost.RecordNs/(float64(max(b.Procs, 1))*1e9))
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
	for _, code := range slices.Sorted(maps.Keys(m)) {
		if code < 200 || code > 299 {
			parts = append(parts, fmt.Sprintf("%d: %d", code, m[code]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + "; the users look up and validate some records that do not exist)"
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func mapSlice(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func bar(done, total time.Duration) string {
	const width = 24
	n := 0
	if total > 0 {
		n = min(width, int(float64(width)*done.Seconds()/total.Seconds()))
	}
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// findPetclinic finds examples/petclinic from the current directory upwards.
func findPetclinic() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	for {
		p := filepath.Join(dir, "examples", "petclinic")
		if fileExists(filepath.Join(p, "go.mod")) {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("demo: examples/petclinic not found; run the demo from the tigris repository")
		}
		dir = parent
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// demoBuildEnv is the environment of the example's build: the user's, with
// go.mod/go.sum updates allowed (the example is its own module) and no
// inherited -toolexec (tigris go adds its own).
func demoBuildEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "TIGRIS_")
	})
	return append(env, "GOFLAGS=-mod=mod")
}

// runWithTicker runs cmd, showing elapsed time on stderr while it runs, and its
// output only when it fails.
func runWithTicker(cmd *exec.Cmd, stderr io.Writer, what string) error {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if isTerminal(stderr) {
				fmt.Fprint(stderr, "\r\033[K")
			}
			if err != nil {
				return fmt.Errorf("%w\n%s", err, out.String())
			}
			return nil
		case <-tick.C:
			if el := time.Since(start).Round(time.Second); isTerminal(stderr) {
				fmt.Fprintf(stderr, "\r\033[K   %s… %s", what, el)
			} else if el%(15*time.Second) == 0 {
				fmt.Fprintf(stderr, "   %s… %s\n", what, el)
			}
		}
	}
}

// service is the running example.
type service struct {
	cmd   *exec.Cmd
	url   string // the API
	admin string // host:port of the admin endpoint
	exit  chan error
}

var (
	listeningRE = regexp.MustCompile(`listening on (http://\S+)`)
	adminRE     = regexp.MustCompile(`tigris: admin endpoint on http://([^/\s]+)/`)
)

// startService starts bin and waits until it printed its API address and,
// withAdmin, the admin endpoint's (a plain build prints none).
func startService(ctx context.Context, bin, dir string, withAdmin bool, env []string) (*service, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TIGRIS_") }), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting petclinic: %w", err)
	}
	s := &service{cmd: cmd, exit: make(chan error, 1)}
	urls := make(chan string, 2)
	var logMu sync.Mutex
	var log strings.Builder
	scan := func(r io.Reader, re *regexp.Regexp) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if m := re.FindStringSubmatch(line); m != nil {
				urls <- re.String() + "\x00" + m[1]
			}
			logMu.Lock()
			if log.Len() < 64<<10 {
				log.WriteString(line + "\n")
			}
			logMu.Unlock()
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); scan(stdout, listeningRE) }()
	go func() { defer wg.Done(); scan(stderr, adminRE) }()
	go func() { wg.Wait(); s.exit <- cmd.Wait() }()
	timeout := time.After(30 * time.Second)
	for s.url == "" || withAdmin && s.admin == "" {
		select {
		case u := <-urls:
			re, v, _ := strings.Cut(u, "\x00")
			if re == listeningRE.String() {
				s.url = v
			} else {
				s.admin = v
			}
		case err := <-s.exit:
			logMu.Lock()
			defer logMu.Unlock()
			return nil, fmt.Errorf("petclinic exited at start (%v):\n%s", err, log.String())
		case <-timeout:
			s.kill()
			logMu.Lock()
			defer logMu.Unlock()
			return nil, fmt.Errorf("petclinic did not report its addresses within 30s:\n%s", log.String())
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		}
	}
	return s, nil
}

// stop asks the service to end (SIGTERM) and waits; after grace it kills it.
func (s *service) stop(grace time.Duration) error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("demo: stopping petclinic: %w", err)
	}
	select {
	case <-s.exit:
		return nil
	case <-time.After(grace):
		s.kill()
		return fmt.Errorf("demo: petclinic did not stop within %s after SIGTERM; killed", grace)
	}
}

func (s *service) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
	}
}
