package monitor

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

var (
	startOnce  sync.Once
	startNanos = nanotime()
	wallBase   = time.Now() // wall-clock time at (about) startNanos
)

// sinkBox holds the current sink so the hot path reads it with one atomic load.
type sinkBox struct{ s writer.Sink }

var sink atomic.Pointer[sinkBox]

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
	if b := sink.Swap(&sinkBox{s: s}); b != nil {
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

// start runs once, at the first Register, with registry.mu held: it starts the
// background parts the configuration asks for. The writer opens later, when a
// probe first goes fine.
func start() {
	started.Store(true)
	watchSignals()
	startAnalyzer()
	startAdmin(registry.cfg.Admin)
}

// signalFlushLimit bounds the flush on a signal: the signal's own action (the
// program's handler, or the end of the program) must not wait on a stuck disk.
const signalFlushLimit = 2 * time.Second

// watchSignals flushes the trace on SIGINT and SIGTERM and lets the signal do
// exactly what it would have done without tigris. tigris's os/signal notes how
// many channels were registered when a signal was delivered
// (rewriter/signalpatch.go). More than tigris's own: the program handles the
// signal and received this very delivery, so tigris does nothing more. Only
// tigris's: the program has no handler, so tigris stops its channel and raises
// the signal again, and the default action (ending the program) happens. Without
// the patched os/signal tigris installs no handler; the writer's periodic flush
// then bounds what a signal loses.
//
// watchSignals registers the channel before it returns (from the first
// Register, during package initialization), so a signal that arrives as soon as
// main runs is already caught and flushed.
func watchSignals() {
	if !signalsLinked {
		return
	}
	go handleSignals(notifyStop())
}

func notifyStop() chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch
}

func handleSignals(ch chan os.Signal) {
	defer recoverInternal("signals")
	// After a panic no channel may stay registered with nobody reading it: the
	// program would then ignore SIGINT and SIGTERM.
	defer func() { signal.Stop(ch) }()
	for ; ; ch = notifyStop() {
		var sig os.Signal
		for sig == nil {
			s := <-ch
			if err := flushWithin(signalFlushLimit); err != nil {
				report(fmt.Errorf("flush on %v: %v", s, err))
			}
			if n, ok := s.(syscall.Signal); !ok || handlersAtDelivery(int(n)) <= 1 {
				sig = s // the program does not handle it
			}
		}
		signal.Stop(ch)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Signal(sig)
		}
		time.Sleep(100 * time.Millisecond) // still alive: the signal is ignored
	}
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

// Shutdown flushes and closes the writer. The rewriter defers it in main.main;
// calling it again is harmless. After Shutdown fine records are discarded.
func Shutdown() { shutdown(5 * time.Second) }

func shutdown(limit time.Duration) {
	shutdownOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer recoverInternal("shutdown")
			old := SetSink(nil)
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

// Exit flushes and then calls os.Exit(code). The rewriter replaces os.Exit calls in
// instrumented packages with it, since os.Exit skips deferred calls.
func Exit(code int) {
	if started.Load() {
		Shutdown()
	}
	os.Exit(code)
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
