package dash

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A headless Chromium driven through the DevTools protocol over a pipe
// (--remote-debugging-pipe: JSON messages separated by NUL bytes, the
// browser reading file descriptor 3 and writing 4). That is all a test needs
// from chromedp or Playwright — navigate, evaluate, click, screenshot — in
// two hundred lines of the standard library: no websocket, no port, no
// dependency, and the browser is Debian's own.

// browser is one Chromium process.
type browser struct {
	cmd  *exec.Cmd
	w    *os.File // the browser's fd 3
	mu   sync.Mutex
	next int
	wait map[int]chan cdpMsg
	subs []chan cdpMsg // every event goes to each
	dead chan struct{} // closed when the pipe from the browser ends
	log  *strings.Builder
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startBrowser starts exe headless with a profile of its own, with the
// flags a closed network and a root user need.
func startBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	toBrowser, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{w: w, wait: map[int]chan cdpMsg{}, dead: make(chan struct{}), log: &strings.Builder{}}
	b.cmd = exec.Command(exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-quic", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	b.cmd.Stderr = &lockedWriter{b: b.log}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers go with it
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	go b.read(bufio.NewReaderSize(r, 1<<20))
	t.Cleanup(func() { b.close(t) })
	return b
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

// read dispatches the browser's messages: replies to their callers, events
// to every subscriber.
func (b *browser) read(r *bufio.Reader) {
	defer close(b.dead)
	for {
		line, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMsg
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c := b.wait[m.ID]; c != nil {
				c <- m
				delete(b.wait, m.ID)
			}
		} else {
			for _, s := range b.subs {
				select {
				case s <- m:
				default: // a subscriber that does not keep up misses events
				}
			}
		}
		b.mu.Unlock()
	}
}

// call sends one command (in a page's session when session is not "") and
// returns its result.
func (b *browser) call(ctx context.Context, session, method string, params any, result any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	c := make(chan cdpMsg, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.wait[id] = c
	msg, _ := json.Marshal(cdpMsg{ID: id, Method: method, Params: p, SessionID: session})
	_, err = b.w.Write(append(msg, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-c:
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.dead:
		return fmt.Errorf("%s: the browser exited", method)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// subscribe returns a channel of the events from now on; unsubscribe ends it.
func (b *browser) subscribe() (chan cdpMsg, func()) {
	c := make(chan cdpMsg, 256)
	b.mu.Lock()
	b.subs = append(b.subs, c)
	b.mu.Unlock()
	return c, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, s := range b.subs {
			if s == c {
				b.subs = append(b.subs[:i], b.subs[i+1:]...)
				return
			}
		}
	}
}

func (b *browser) close(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	done := make(chan struct{})
	go func() { b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	b.w.Close()
	if t.Failed() {
		t.Logf("browser output:\n%s", b.log.String())
	}
}

// tab is one page of the browser.
type tab struct {
	b       *browser
	session string
}

// newTab opens a page of width × height CSS pixels.
func (b *browser) newTab(ctx context.Context, width, height int) (*tab, error) {
	var target struct{ TargetID string }
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var att struct{ SessionID string }
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, err
	}
	p := &tab{b: b, session: att.SessionID}
	for _, m := range []string{"Page.enable", "Runtime.enable"} {
		if err := p.call(ctx, m, nil, nil); err != nil {
			return nil, err
		}
	}
	return p, p.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
}

func (p *tab) call(ctx context.Context, method string, params, result any) error {
	return p.b.call(ctx, p.session, method, params, result)
}

// loaded waits for the page's load event after do, which starts a
// navigation (a Page.navigate, a click on a submit button).
func (p *tab) loaded(ctx context.Context, do func() error) error {
	events, stop := p.b.subscribe()
	defer stop()
	if err := do(); err != nil {
		return err
	}
	for {
		select {
		case m := <-events:
			if m.Method == "Page.loadEventFired" && m.SessionID == p.session {
				return nil
			}
		case <-p.b.dead:
			return errors.New("the browser exited")
		case <-ctx.Done():
			return fmt.Errorf("waiting for the page to load: %w", ctx.Err())
		}
	}
}

// navigate loads url and waits for its load event.
func (p *tab) navigate(ctx context.Context, url string) error {
	return p.loaded(ctx, func() error {
		var nav struct{ ErrorText string }
		if err := p.call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
			return err
		}
		if nav.ErrorText != "" {
			return fmt.Errorf("navigating to %s: %s", url, nav.ErrorText)
		}
		return nil
	})
}

// eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value, which must be JSON, into out.
func (p *tab) eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if e := r.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluating %.60q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(r.Result.Value, out)
}

// click presses and releases the left mouse button at (x, y), as a person
// would: the browser hit-tests, focuses and activates what is there.
func (p *tab) click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}
		if typ == "mouseMoved" {
			ev["button"], ev["clickCount"] = "none", 0
		}
		if err := p.call(ctx, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return err
		}
	}
	return nil
}

// screenshot captures the whole page, at most maxHeight pixels of it, as PNG.
func (p *tab) screenshot(ctx context.Context, width, maxHeight int) ([]byte, error) {
	var m struct {
		CSSContentSize struct{ Height float64 } `json:"cssContentSize"`
	}
	if err := p.call(ctx, "Page.getLayoutMetrics", nil, &m); err != nil {
		return nil, err
	}
	h := min(int(m.CSSContentSize.Height), maxHeight)
	if err := p.call(ctx, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		return nil, err
	}
	var shot struct{ Data string }
	if err := p.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png", "clip": map[string]any{"x": 0, "y": 0, "width": width, "height": h, "scale": 1}, "captureBeyondViewport": true}, &shot); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(shot.Data)
}
