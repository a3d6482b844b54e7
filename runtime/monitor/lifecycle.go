package monitor

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

var (
	startOnce  sync.Once
	startNanos = nanotime()
	wallBase   = time.Now() // wall-clock time at (about) startNanos
)

// sinkBox holds the current sink so the hot path reads it with one atomic load.
// async is s when s is the asynchronous writer, whose queue the fine exit
// appends records to (Call.exit).
type sinkBox struct {
	s     writer.Sink
	async *writer.Async
	null  *writer.Null // s when s discards (MooBench's collecting configuration)
	// closing is set, with s nil, while the writer closes (open.go).
	closing *closing
}

var sink atomic.Pointer[sinkBox]

// newSinkBox boxes s, noting whether it is the asynchronous writer or the
// null one: the fine exit then stores its record straight into the writer's
// queue, or counts it, under the pin it holds for the statistics, instead of
// building the record and calling Sink.Write. Every box is made here: one
// made otherwise would send every record the slow way (as it did, unseen,
// for the writer the settings open, until TestOpenedWriterTakesFastPath).
func newSinkBox(s writer.Sink) *sinkBox {
	box := &sinkBox{s: s}
	box.async, _ = s.(*writer.Async)
	box.null, _ = s.(*writer.Null)
	return box
}

func currentSink() writer.Sink {
	if b := sink.Load(); b != nil {
		return b.s
	}
	return nil
}

// SetSink replaces where fine records go (nil: nowhere) and returns the previous
// sink; the caller owns closing it. Probes re-announce themselves to the new sink.
func SetSink(s writer.Sink) writer.Sink {
	var old writer.Sink
	if b := sink.Swap(newSinkBox(s)); b != nil {
		old = b.s
	}
	registry.mu.Lock()
	registry.sinkChosen = true
	for _, p := range registry.probes {
		p.defined.Store(0)
	}
	registry.mu.Unlock()
	return old
}

// start runs once, at the first registration, with registry.mu held: it starts
// the background parts the configuration asks for. The writer opens later, when
// a probe first goes fine.
func start() {
	started.Store(true)
}

// linked records what the binary links beside the monitor (the first non-nil
// of each part wins; every probe table names the same ones) and starts it:
// the exit hook is registered, the admin endpoint starts when the settings
// ask for one. Called with registry.mu held.
func link(l Links) {
	if l.AtExit != nil && !registry.atExit {
		registry.atExit = true
		l.AtExit(func() { shutdown(exitFlushLimit) })
		// A tigris-built program (its probe tables link the exit hook):
		// phase 1 keeps its coarse probes within their budget.
		startPhase1()
	}
	if l.Analyzer != nil && !registry.analyzerRuns {
		registry.analyzerRuns = true
		startAnalyzer(l.Analyzer)
	}
	if l.Admin != nil && !registry.admin {
		registry.admin = true
		startAdmin(l.Admin, registry.cfg.Admin)
	}
	if !registry.admin && registry.cfg.Admin.Listen != "" && !registry.adminMissing {
		registry.adminMissing = true
		report(fmt.Errorf("admin endpoint %s not started: this binary was built without it (tigris builds it in only when tigris.yaml sets admin.link: true or admin.listen); "+
			"add \"link: true\" under \"admin:\" in tigris.yaml and rebuild with tigris go build", registry.cfg.Admin.Listen))
	}
}

// exitFlushLimit bounds the flush when the program exits: a stuck disk must not
// keep a finished program alive.
const exitFlushLimit = 5 * time.Second

// startAdmin runs the starter, if the settings ask for an endpoint, on its own
// goroutine: registration holds registry.mu and runs inside the program's
// init, and listening may resolve a host name. A failure is reported, never
// fatal: the program runs on without the endpoint.
func startAdmin(f func(settings.Admin) error, a settings.Admin) {
	if a.Listen == "" {
		return
	}
	go func() {
		defer recoverInternal("admin start")
		if err := f(a); err != nil {
			report(fmt.Errorf("admin endpoint not started: %v", err))
		}
	}()
}

// flushWithin is Flush bounded in time.
func flushWithin(limit time.Duration) error {
	done := make(chan error, 1)
	go func() {
		defer recoverInternal("flush")
		done <- Flush()
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("not done within %v", limit)
	}
}

// Flush pushes buffered records to the file. Safe to call any time.
func Flush() error {
	if f, ok := currentSink().(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

var shutdownOnce sync.Once

// Shutdown flushes and closes the writer. A tigris-built binary calls it when
// the program exits (Links.AtExit); a program may call it earlier, and calling
// it again is harmless. Recorded calls still running are written as
// unfinished (open.go). After Shutdown fine records are discarded.
func Shutdown() { shutdown(5 * time.Second) }

func shutdown(limit time.Duration) {
	shutdownOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer recoverInternal("shutdown")
			old := closeSink()
			if c, ok := old.(interface{ Close() error }); ok {
				if err := c.Close(); err != nil {
					report(fmt.Errorf("closing writer: %v", err))
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(limit):
			report(fmt.Errorf("writer did not close within %v; some records may be lost", limit))
		}
	})
}

// report writes an internal error to stderr, at most one line per second and only
// once per distinct message, so a broken disk does not flood the program's output.
func report(err error) {
	reportMu.Lock()
	defer reportMu.Unlock()
	msg := err.Error()
	if reported[msg] {
		return
	}
	now := time.Now()
	if now.Sub(lastReport) < time.Second && len(reported) > 0 {
		suppressed++
		return
	}
	if reported == nil || len(reported) >= maxRemembered {
		// Messages that carry changing values would grow the map by one entry a
		// second for as long as the program runs; forgetting costs at most a
		// repeated line, still one a second.
		reported = map[string]bool{}
	}
	reported[msg] = true
	lastReport = now
	extra := ""
	if suppressed > 0 {
		extra = fmt.Sprintf(" (%d more suppressed)", suppressed)
		suppressed = 0
	}
	fmt.Fprintf(os.Stderr, "tigris: %s%s\n", msg, extra)
}

// maxRemembered bounds the messages report remembers.
const maxRemembered = 1000

var (
	reportMu   sync.Mutex
	reported   map[string]bool
	lastReport time.Time
	suppressed int
)

// recoverInternal keeps a panic inside tigris from reaching the program.
func recoverInternal(where string) {
	if r := recover(); r != nil {
		report(fmt.Errorf("internal error in %s: %v", where, r))
	}
}
