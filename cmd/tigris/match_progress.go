package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress of tigris match: which step runs and for how long, on stderr, for
// the steps that take long (type-checking compiles the imports the build
// cache lacks). On a terminal one line is rewritten in place every second
// once a step has run progressShowAfter; a step that ends sooner shows
// nothing. Elsewhere (a pipe, a file, a test's buffer) nothing is shown
// unless --progress asks, and then a line once a step has run
// progressShowAfter and every progressEvery after.
const (
	progressShowAfter = 2 * time.Second
	progressEvery     = 10 * time.Second
)

// matchProgress shows the steps of rewriter.ListMatches (MatchOptions.Progress).
// Its methods may be called on a nil *matchProgress, which shows nothing.
type matchProgress struct {
	w   io.Writer
	tty bool

	mu      sync.Mutex
	name    string    // the step running
	since   time.Time // when it began
	next    time.Duration
	printed bool // a line is on a terminal's screen, to clear

	quit chan struct{}
	done chan struct{}
}

// startMatchProgress starts showing progress on w when it is a terminal, or
// always, and returns nil otherwise.
func startMatchProgress(w io.Writer, always bool) *matchProgress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	if !tty && !always {
		return nil
	}
	p := newMatchProgress(w, tty)
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				p.tick(now)
			case <-p.quit:
				return
			}
		}
	}()
	return p
}

func newMatchProgress(w io.Writer, tty bool) *matchProgress {
	return &matchProgress{w: w, tty: tty, quit: make(chan struct{}), done: make(chan struct{})}
}

// step records that a step begins.
func (p *matchProgress) step(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.since, p.next = name, time.Now(), progressShowAfter
}

// tick shows the step running at now, if it has run long enough.
func (p *matchProgress) tick(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name == "" {
		return
	}
	ran := now.Sub(p.since)
	if ran < p.next {
		return
	}
	line := fmt.Sprintf("match: %s, %s", p.name, ran.Round(time.Second))
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+line)
		p.printed = true
		p.next = ran + time.Second
		return
	}
	fmt.Fprintln(p.w, line)
	p.next = ran + progressEvery
}

// stop ends the progress and clears a terminal's line for what follows.
func (p *matchProgress) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	<-p.done
	p.clear()
}

// clear clears a terminal's line if a step is shown on it.
func (p *matchProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.printed = false
	}
}
