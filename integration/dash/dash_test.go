package dash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/tracegen"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func TestMain(m *testing.M) { os.Exit(itest.Main(m)) }

// serviceFuncs are the functions of the example's service layer, the ones
// that handle its requests.
const serviceFuncs = "github.com/tigrisgo/tigris/examples/petclinic/internal/service.(*ClinicService)."

// process is a program a test started, with its output.
type process struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	seen chan string // lines matching the pattern waited for
}

// start runs exe with args and env, and waits until a line of its output
// matches re; it returns the process and the match's first group. The
// test's cleanup stops it (SIGTERM, then SIGKILL).
func start(t *testing.T, dir string, env []string, re *regexp.Regexp, exe string, args ...string) (*process, string) {
	t.Helper()
	p := &process{cmd: exec.Command(exe, args...), seen: make(chan string, 1)}
	p.cmd.Dir = dir
	p.cmd.Env = itest.Env(env...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { p.cmd.Wait(); pw.Close(); close(exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(exe), p.output())
		}
	})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.mu.Lock()
			if p.out.Len() < 64<<10 {
				p.out.WriteString(sc.Text() + "\n")
			}
			p.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case p.seen <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case v := <-p.seen:
		return p, v
	case <-exited:
		t.Fatalf("%s exited before printing /%s/:\n%s", exe, re, p.output())
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not print /%s/ within 2 minutes:\n%s", exe, re, p.output())
	}
	return nil, ""
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

var (
	adminRE = regexp.MustCompile(`tigris: admin endpoint on http://([^/\s]+)/`)
	dashRE  = regexp.MustCompile(`tigris dash: (http://\S+/) `)
	apiRE   = regexp.MustCompile(`listening on (http://\S+)`)
)

// row is one line of the page's functions table.
type row struct {
	Sig   string `json:"sig"`
	Calls int64  `json:"calls"`
	Mode  string `json:"mode"`
}

const rowsJS = `[...document.querySelectorAll('#functions tbody tr')].map(tr => ({sig: tr.dataset.signature, calls: Number(tr.dataset.calls), mode: tr.dataset.mode}))`

// TestDashInBrowser: PetClinic built with tigris, under load; tigris dash on
// its admin endpoint; Chromium loads the page, finds the service's handlers
// with their calls, switches one to fine by clicking, which tigris ctl then
// shows, and saves a screenshot (to $TIGRIS_DASH_SCREENSHOT too, which is
// how docs/dashboard.png is made). Then a page of another origin posts the
// same form, with the right form token even, and changes nothing.
func TestDashInBrowser(t *testing.T) {
	itest.RequireGo(t)
	exe := chromium(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "petclinic"+itest.ExeSuffix())
	itest.Tigris(t, filepath.Join(itest.RepoRoot, "examples", "petclinic"), []string{"GOFLAGS=", "GOWORK="}, "go", "build", "-o", bin, "./cmd/petclinic")

	svc, adminAddr := start(t, dir, []string{"TIGRIS_ADMIN=127.0.0.1:0", "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on", "TIGRIS_INTERVAL=2s",
		"TIGRIS_SAMPLING=100%", "TIGRIS_WRITER=async", "TIGRIS_OUT=" + filepath.Join(dir, "petclinic.tgr")}, adminRE, bin, "-addr", "127.0.0.1:0")
	var apiURL string
	for deadline := time.Now().Add(30 * time.Second); apiURL == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := apiRE.FindStringSubmatch(svc.output()); m != nil {
			apiURL = m[1]
		}
	}
	if apiURL == "" {
		t.Fatalf("petclinic did not print its address:\n%s", svc.output())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loadDone := make(chan error, 1)
	go func() {
		_, err := loadgen.Run(ctx, loadgen.Options{BaseURL: apiURL, Duration: time.Hour, MinUsers: 3, MaxUsers: 5, Seed: 1})
		loadDone <- err
	}()
	defer func() { cancel(); <-loadDone }()

	program, err := adminclient.New(adminAddr, adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The service has served requests, and the analyzer has run a cycle.
	waitFor(t, 60*time.Second, "service calls and an analysis cycle", func() bool {
		st, err := program.Stats(ctx, adminclient.StatsQuery{Filter: adminclient.Filter{Pointcut: "execution(* " + serviceFuncs + "*(..))"}})
		h, herr := program.History(ctx)
		return err == nil && herr == nil && len(st.Stats) > 0 && st.Stats[0].Count > 0 && len(h) > 0
	})

	_, dashURL := start(t, dir, nil, dashRE, itest.TigrisBin, "dash", "--refresh", "1s", adminAddr)
	if !strings.HasPrefix(dashURL, "http://127.0.0.1:") {
		t.Errorf("tigris dash serves on %s, want loopback by default", dashURL)
	}

	b := startBrowser(t, exe)
	tctx, tcancel := context.WithTimeout(ctx, 3*time.Minute)
	defer tcancel()
	page, err := b.newTab(tctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if err := page.navigate(tctx, dashURL); err != nil {
		t.Fatal(err)
	}
	// The first page names the program (its executable, from GET health),
	// not its address.
	var title string
	if err := page.eval(tctx, `document.title`, &title); err != nil || title != "tigris dash · petclinic" {
		t.Errorf("the first page's title is %q (%v), want tigris dash · petclinic", title, err)
	}

	// The top-functions table lists the service's handlers, with calls.
	var rows []row
	var handler row
	waitFor(t, 30*time.Second, "the service's handlers in the functions table", func() bool {
		if err := page.eval(tctx, rowsJS, &rows); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if strings.HasPrefix(r.Sig, serviceFuncs) && r.Calls > 0 && r.Mode == "coarse" {
				handler = r
				return true
			}
		}
		page.navigate(tctx, dashURL)
		return false
	})
	t.Logf("%d functions on the page; switching %s (%d calls) to fine", len(rows), handler.Sig, handler.Calls)

	// The page refreshes its live sections itself (every --refresh, 1s).
	waitFor(t, 15*time.Second, "the page's own refresh", func() bool {
		var at string
		page.eval(tctx, `document.body.dataset.refreshed || ''`, &at)
		return at != ""
	})

	// Pause the page's refresh (a person reading would), then click the
	// handler's "fine" button.
	pause := center(t, tctx, page, `document.getElementById('pause')`)
	if err := page.click(tctx, pause[0], pause[1]); err != nil {
		t.Fatal(err)
	}
	var pressed string
	page.eval(tctx, `document.getElementById('pause').getAttribute('aria-pressed')`, &pressed)
	if pressed != "true" {
		t.Errorf("the pause button is not pressed after a click: aria-pressed %q", pressed)
	}
	sigJS, _ := json.Marshal(handler.Sig)
	button := fmt.Sprintf(`[...document.querySelectorAll('#functions tbody tr')].find(tr => tr.dataset.signature === %s).querySelector('button.mode-btn.fine')`, sigJS)
	xy := center(t, tctx, page, button)
	if err := page.loaded(tctx, func() error { return page.click(tctx, xy[0], xy[1]) }); err != nil {
		t.Fatal(err)
	}

	// tigris ctl sees the change.
	var pattern string
	if err := page.eval(tctx, fmt.Sprintf(`[...document.querySelectorAll('#functions tbody tr')].find(tr => tr.dataset.signature === %s).querySelector('input[name=pattern]').value`, sigJS), &pattern); err != nil {
		t.Fatal(err)
	}
	rulesOut := itest.Tigris(t, dir, nil, "ctl", "--addr", adminAddr, "rules")
	if !regexp.MustCompile(`(?m)^0 +fine +` + regexp.QuoteMeta(pattern) + `$`).MatchString(rulesOut) {
		t.Errorf("tigris ctl rules does not show the switch to fine (%s):\n%s", pattern, rulesOut)
	}
	probesOut := itest.Tigris(t, dir, nil, "ctl", "--addr", adminAddr, "probes", "--match", pattern)
	if !strings.Contains(probesOut, "fine") {
		t.Errorf("tigris ctl probes does not show the handler fine:\n%s", probesOut)
	}
	var flash string
	page.eval(tctx, `(document.querySelector('.flash') || {}).textContent || ''`, &flash)
	if !strings.Contains(flash, "Added manual rule 0: fine") || !strings.Contains(flash, "tigris ctl rules add") {
		t.Errorf("the page does not report the switch: %q", flash)
	}
	if err := page.eval(tctx, rowsJS, &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Sig == handler.Sig && r.Mode != "fine" {
			t.Errorf("the page shows %s as %s after the switch", r.Sig, r.Mode)
		}
	}

	// A rule from the page's pattern form: the repositories fine too, so
	// the handler's call trees hold their calls. Typed and submitted as a
	// person would (focus, text, Enter).
	repos := "execution(* github.com/tigrisgo/tigris/examples/petclinic/internal/repository.*(..))"
	input := center(t, tctx, page, `document.getElementById('rule-pattern')`)
	if err := page.click(tctx, input[0], input[1]); err != nil {
		t.Fatal(err)
	}
	if err := page.call(tctx, "Input.insertText", map[string]any{"text": repos}, nil); err != nil {
		t.Fatal(err)
	}
	if err := page.eval(tctx, `(() => { document.getElementById('rule-mode').value = 'fine'; return true })()`, nil); err != nil {
		t.Fatal(err)
	}
	add := center(t, tctx, page, `document.querySelector('#modes .rule-form button')`)
	if err := page.loaded(tctx, func() error { return page.click(tctx, add[0], add[1]) }); err != nil {
		t.Fatal(err)
	}
	if m := manual(t, program); len(m) != 2 || m[1].Pattern != repos || m[1].Mode != settings.Fine {
		t.Fatalf("the pattern form added %+v", m)
	}

	// The screenshot, once the fine records made histograms and call trees
	// of several calls.
	waitFor(t, 40*time.Second, "histograms and call trees on the page", func() bool {
		page.navigate(tctx, dashURL)
		var ok bool
		page.eval(tctx, `document.querySelectorAll('#functions svg.hist').length >= 4 && [...document.querySelectorAll('#traces tbody tr td:nth-child(4)')].some(td => parseInt(td.textContent.replace(/,/g, '')) >= 3)`, &ok)
		return ok
	})
	// Every number a person reads is rounded, with its unit.
	var text string
	if err := page.eval(tctx, `document.body.innerText`, &text); err != nil {
		t.Fatal(err)
	}
	if m := human.Unrounded.FindString(text); m != "" {
		i := strings.Index(text, m)
		t.Errorf("unrounded number %q on the page: …%s…", m, text[max(i-100, 0):min(i+60, len(text))])
	}
	shot, err := page.screenshot(tctx, 1400, 2600)
	if err != nil {
		t.Fatal(err)
	}
	checkScreenshot(t, shot)
	saveScreenshot(t, shot)

	// A page of another origin posts the switch form, token and all: the
	// browser says where it comes from, and tigris dash refuses.
	var token string
	if err := page.eval(tctx, `document.querySelector('input[name=csrf]').value`, &token); err != nil || token == "" {
		t.Fatalf("no form token on the page: %v", err)
	}
	before := manual(t, program)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%saction"><input name="csrf" value="%s"><input name="kind" value="mode"><input name="pattern" value="%s"><input name="mode" value="off"></form><script>document.forms[0].submit()</script>`,
			dashURL, token, pattern)
	}))
	defer evil.Close()
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another site
	var body string
	waitFor(t, 20*time.Second, "the other origin's post to be answered", func() bool {
		page.navigate(tctx, evilURL)
		time.Sleep(500 * time.Millisecond)
		page.eval(tctx, `document.body ? document.body.innerText : ''`, &body)
		return strings.Contains(body, "cross-origin") || strings.Contains(body, "refused")
	})
	if !strings.Contains(body, "cross-origin request refused") {
		t.Errorf("the other origin's post got %q", body)
	}
	if after := manual(t, program); len(after) != len(before) || after[0].Mode != settings.Fine || after[1].Mode != settings.Fine {
		t.Errorf("a post from another origin changed the rules: %+v, were %+v", after, before)
	}
}

// center is the middle of the element expr finds, scrolled into view.
func center(t *testing.T, ctx context.Context, p *tab, expr string) [2]float64 {
	t.Helper()
	var xy [2]float64
	js := `(() => { const e = ` + expr + `; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2]; })()`
	if err := p.eval(ctx, js, &xy); err != nil {
		t.Fatal(err)
	}
	return xy
}

func manual(t *testing.T, c *adminclient.Client) []settings.Rule {
	t.Helper()
	rl, err := c.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rl.Manual
}

// waitFor polls cond every half second until it holds, failing the test
// after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, d)
		}
	}
}

// checkScreenshot checks that the screenshot is a page-sized picture with
// something drawn on it.
func checkScreenshot(t *testing.T, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	bnd := img.Bounds()
	colours := map[[3]uint32]bool{}
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 7 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	if bnd.Dx() != 1400 || bnd.Dy() < 800 || len(colours) < 20 {
		t.Errorf("screenshot of %dx%d with %d colours: not the page", bnd.Dx(), bnd.Dy(), len(colours))
	}
}

// saveScreenshot keeps the screenshot in the test's directory (logged) and
// at $TIGRIS_DASH_SCREENSHOT when set.
func saveScreenshot(t *testing.T, data []byte) {
	t.Helper()
	paths := []string{filepath.Join(t.TempDir(), "dashboard.png")}
	if p := os.Getenv("TIGRIS_DASH_SCREENSHOT"); p != "" {
		paths = append(paths, p)
	}
	for _, p := range paths {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot: %s (%d bytes)", strings.Join(paths, ", "), len(data))
}

// TestDashLoadTime1M: tigris dash on a trace of a million records. It
// summarizes the trace once, when it starts, so the page is built from the
// summary; the browser's navigation timing says how long the page took.
// Timings are logged, not asserted (the machine is shared); with
// $TIGRIS_DASH_TIMINGS they are written there as JSON.
func TestDashLoadTime1M(t *testing.T) {
	itest.RequireGo(t)
	exe := chromium(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "m1.tgr")
	if err := tracegen.Write(trace, 1_000_000); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, dashURL := start(t, dir, nil, dashRE, itest.TigrisBin, "dash", trace)
	startup := time.Since(began)

	b := startBrowser(t, exe)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page, err := b.newTab(ctx, 1400, 1000)
	if err != nil {
		t.Fatal(err)
	}
	type timing struct {
		ResponseEnd      float64 `json:"responseEnd"`
		DOMContentLoaded float64 `json:"domContentLoadedEventEnd"`
		Load             float64 `json:"loadEventEnd"`
		TransferSize     float64 `json:"transferSize"`
	}
	// A browser's first page pays for its profile, font and network caches;
	// a person's browser has paid already. That first load is logged apart.
	var cold timing
	if err := page.navigate(ctx, dashURL+"assets/icon.svg"); err != nil {
		t.Fatal(err)
	}
	if err := page.navigate(ctx, dashURL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "navigation timing", func() bool {
		return page.eval(ctx, `performance.getEntriesByType('navigation')[0].toJSON()`, &cold) == nil && cold.Load > 0
	})
	var loads []timing
	for range 3 {
		if err := page.navigate(ctx, dashURL); err != nil {
			t.Fatal(err)
		}
		var tm timing
		// loadEventEnd is set just after the load event's handlers ran.
		waitFor(t, 10*time.Second, "navigation timing", func() bool {
			return page.eval(ctx, `performance.getEntriesByType('navigation')[0].toJSON()`, &tm) == nil && tm.Load > 0
		})
		loads = append(loads, tm)
	}
	// Where the browser spent the last load.
	var perf struct {
		Metrics []struct {
			Name  string
			Value float64
		}
	}
	if err := page.call(ctx, "Performance.enable", nil, nil); err == nil {
		page.navigate(ctx, dashURL)
		page.call(ctx, "Performance.getMetrics", nil, &perf)
	}
	spent := map[string]float64{}
	for _, m := range perf.Metrics {
		switch m.Name {
		case "Nodes", "LayoutDuration", "RecalcStyleDuration", "ScriptDuration", "TaskDuration":
			spent[m.Name] = m.Value
		}
	}
	t.Logf("browser metrics of the page (durations in s, summed since the tab opened): %v", spent)
	var rows []row
	if err := page.eval(ctx, rowsJS, &rows); err != nil {
		t.Fatal(err)
	}
	var calls int64
	for _, r := range rows {
		calls += r.Calls
	}
	if len(rows) != 21 || calls != 1_000_000 {
		t.Errorf("the page lists %d functions with %d calls, want the trace's 21 functions and 1,000,000 calls", len(rows), calls)
	}
	t.Logf("tigris dash on 1,000,000 records: started (summary built) in %s; page loads (ms, navigation start to response end / DOMContentLoaded / load): the browser's first %+v, then %+v", startup.Round(time.Millisecond), cold, loads)
	if p := os.Getenv("TIGRIS_DASH_TIMINGS"); p != "" {
		js, _ := json.MarshalIndent(map[string]any{"records": 1_000_000, "startupMs": startup.Milliseconds(), "firstLoad": cold, "loads": loads, "browser": spent}, "", "  ")
		if err := os.WriteFile(p, append(js, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
