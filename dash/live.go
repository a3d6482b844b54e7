package dash

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// Live is a Source of a running program, through its admin API only
// (package adminclient), so everything the page shows and does is also what
// tigris ctl shows and does. A poller reads the program every refresh;
// the page renders the last reading. Memory is bounded whatever the program
// runs for: the series keep the last Windows readings, the analysis history
// is the program's own (at most 100 cycles), and the recent records are
// replaced at each reading.
type Live struct {
	c    *adminclient.Client
	addr string
	o    LiveOptions

	reading  chan struct{} // held by the one reading at a time: the ticker's, a change's, a first page's
	mu       sync.Mutex
	st       liveState
	prev     map[uint32]cumulative // totals at the last reading
	series   map[uint32]*ring[point]
	written  ring[float64]
	dropped  ring[float64]
	queued   ring[float64]
	lastW    *admin.WriterState
	recent   *recentWindow
	viewed   time.Time // when a page was last rendered
	readings int
}

// LiveOptions configure NewLive. Zero values are defaults.
type LiveOptions struct {
	// Refresh is how often the program is read (3 s).
	Refresh time.Duration
	// Windows is how many readings the series keep (60).
	Windows int
	// RecentBytes is how much of the end of the program's trace file the
	// recent call trees come from (1 MiB; admin.MaxRecentBytes at most).
	RecentBytes int
	// ReadOnly disables every change.
	ReadOnly bool
	// TokenGiven says the client carries a token, for the wording of a
	// refusal.
	TokenGiven bool
	// Now is the clock; time.Now when nil. Tests drive readings with it.
	Now func() time.Time
}

func (o *LiveOptions) defaults() {
	if o.Refresh <= 0 {
		o.Refresh = 3 * time.Second
	}
	if o.Windows <= 0 {
		o.Windows = maxSeries
	}
	if o.RecentBytes <= 0 {
		o.RecentBytes = admin.DefaultRecentBytes
	}
	o.RecentBytes = min(o.RecentBytes, admin.MaxRecentBytes)
	if o.Now == nil {
		o.Now = time.Now
	}
}

// liveState is one reading of the program.
type liveState struct {
	at       time.Time
	err      error // the reading failed: the program does not answer
	health   *admin.Health
	stats    *admin.StatsList
	probes   map[uint32]probeAt
	rules    *admin.RuleList
	sampling *admin.SamplingState
	analysis *settings.Analysis
	history  []adminclient.Cycle
	writer   *admin.WriterState
	auth     error // the last answer of POST auth (nil: authorized)
	authAt   time.Time
}

type probeAt struct {
	file string
	line int
}

type cumulative struct {
	count   uint64
	totalNs float64
}

// point is one function's calls in one window.
type point struct{ calls, meanNs float64 }

// recentWindow is the program's recent records, summarized.
type recentWindow struct {
	data []byte
	agg  *agg
	at   time.Time
	err  error
}

// NewLive returns a Source of the program c talks to; addr is the address
// as the user gave it. Run reads the program until its context ends.
func NewLive(c *adminclient.Client, addr string, o LiveOptions) *Live {
	o.defaults()
	l := &Live{c: c, addr: addr, o: o, reading: make(chan struct{}, 1)}
	l.reset()
	return l
}

func (l *Live) reset() {
	l.prev = map[uint32]cumulative{}
	l.series = map[uint32]*ring[point]{}
	l.written, l.dropped, l.queued = newRing[float64](l.o.Windows), newRing[float64](l.o.Windows), newRing[float64](l.o.Windows)
	l.lastW = nil
	l.recent = nil
}

// Run reads the program every Refresh until ctx ends. Call Read first for a
// page at once.
func (l *Live) Run(ctx context.Context) {
	t := time.NewTicker(l.o.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.Read(ctx)
		}
	}
}

// Read reads the program once: the tables, the series' next window and,
// while someone looks at the page, the recent records.
func (l *Live) Read(ctx context.Context) {
	l.reading <- struct{}{}
	defer func() { <-l.reading }()
	l.read(ctx)
}

// firstWait bounds how long a page waits for what the program has not been
// asked yet: its first reading, or its recent records when the page is the
// first to look at them.
const firstWait = 3 * time.Second

// prime reads, for a page about to render, what the page would otherwise
// lack until the next reading: the program itself when it was never read,
// and its recent records (the histograms, the call trees, the binary's name)
// when it has some and none were read yet. It waits at most firstWait, and
// never again for a program that did not answer.
func (l *Live) prime(ctx context.Context) {
	l.mu.Lock()
	l.viewed = l.o.Now()
	need := func() bool {
		return l.st.at.IsZero() || l.recent == nil && l.st.writer != nil && l.st.writer.Active
	}
	want := need()
	l.mu.Unlock()
	if !want {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, firstWait)
	defer cancel()
	select {
	case l.reading <- struct{}{}:
		defer func() { <-l.reading }()
	case <-ctx.Done():
		return
	}
	l.mu.Lock()
	want, never := need(), l.st.at.IsZero()
	l.mu.Unlock()
	switch {
	case !want:
	case never:
		l.read(ctx) // the page is looked at: the recent records come too
	default:
		rw := l.readRecent(ctx, l.o.Now())
		l.mu.Lock()
		if l.recent == nil {
			l.recent = rw
		}
		l.mu.Unlock()
	}
}

// read is Read, with the reading held.
func (l *Live) read(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(l.o.Refresh, 5*time.Second))
	defer cancel()
	now := l.o.Now()
	var st liveState
	st.at = now
	st.health, st.err = l.c.Health(ctx)
	if st.err == nil {
		st.stats, st.err = l.c.Stats(ctx, adminclient.StatsQuery{Sort: "total"})
	}
	if st.err != nil {
		l.mu.Lock()
		old := l.st
		l.st.err, l.st.at = st.err, now
		if old.health == nil {
			l.st = st
		}
		l.mu.Unlock()
		return
	}
	// The rest may fail alone (an older program); the page says what is missing.
	st.rules, _ = l.c.Rules(ctx)
	st.sampling, _ = l.c.Sampling(ctx)
	st.analysis, _ = l.c.Analysis(ctx)
	st.history, _ = l.c.History(ctx)
	if len(st.history) > 100 {
		st.history = st.history[len(st.history)-100:]
	}
	st.writer, _ = l.c.Writer(ctx)

	l.mu.Lock()
	restarted := l.st.health != nil && (l.st.health.PID != st.health.PID || l.st.health.UptimeSeconds > st.health.UptimeSeconds)
	needProbes := l.st.probes == nil || restarted || len(l.st.probes) != st.health.Probes || l.readings%20 == 0
	st.probes = l.st.probes
	st.auth, st.authAt = l.st.auth, l.st.authAt
	needAuth := !l.o.ReadOnly && (restarted || st.authAt.IsZero() || now.Sub(st.authAt) >= time.Minute)
	watched := now.Sub(l.viewed) < 2*l.o.Refresh+30*time.Second
	var recentAt time.Time
	if l.recent != nil {
		recentAt = l.recent.at
	}
	l.mu.Unlock()

	if needProbes {
		if pl, err := l.c.Probes(ctx, adminclient.Filter{}); err == nil {
			st.probes = make(map[uint32]probeAt, len(pl.Probes))
			for _, p := range pl.Probes {
				st.probes[p.ID] = probeAt{p.File, p.Line}
			}
		}
	}
	if needAuth {
		_, st.auth = l.c.Auth(ctx)
		st.authAt = now
	}
	var recent *recentWindow
	if watched && st.writer != nil && st.writer.Active && now.Sub(recentAt) >= max(l.o.Refresh, 5*time.Second) {
		recent = l.readRecent(ctx, now)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if restarted {
		l.reset()
	}
	l.st = st
	if recent != nil {
		l.recent = recent
	}
	l.advance(st)
	l.readings++
}

// advance adds one window to the series: each function's calls and mean
// duration since the previous reading, and the writer's records.
func (l *Live) advance(st liveState) {
	seen := make(map[uint32]bool, len(st.stats.Stats))
	for _, s := range st.stats.Stats {
		seen[s.ID] = true
		cur := cumulative{s.Count, s.TotalNs}
		prev, ok := l.prev[s.ID]
		l.prev[s.ID] = cur
		if !ok {
			continue
		}
		r := l.series[s.ID]
		if r == nil {
			nr := newRing[point](l.o.Windows)
			r = &nr
			l.series[s.ID] = r
		}
		var p point
		if cur.count >= prev.count {
			p.calls = float64(cur.count - prev.count)
		}
		if p.calls > 0 {
			p.meanNs = (cur.totalNs - prev.totalNs) / p.calls
		}
		r.push(p)
	}
	// Probes are registered for good, but a program may be replaced by
	// another at the same address: drop what no longer exists.
	for id := range l.prev {
		if !seen[id] {
			delete(l.prev, id)
			delete(l.series, id)
		}
	}
	if w := st.writer; w != nil {
		if p := l.lastW; p != nil && w.Written >= p.Written && w.Dropped >= p.Dropped {
			l.written.push(float64(w.Written - p.Written))
			l.dropped.push(float64(w.Dropped - p.Dropped))
			l.queued.push(float64(w.Queued))
		}
		l.lastW = w
	}
}

// readRecent fetches and summarizes the recent records.
func (l *Live) readRecent(ctx context.Context, now time.Time) *recentWindow {
	rw := &recentWindow{at: now}
	rw.data, rw.err = l.c.Recent(ctx, l.o.RecentBytes)
	if rw.err != nil {
		return rw
	}
	rw.agg = newAgg(keepTrees, maxNodes, maxSeries)
	_, rw.err = traceconv.Walk(writer.NewReader(bytes.NewReader(rw.data)), traceconv.Options{}, func(t *traceconv.Tree) error {
		rw.agg.add(t)
		return nil
	})
	rw.agg.finish()
	return rw
}

// readErr is why the last reading failed, nil when it did not.
func (l *Live) readErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.err
}

// View implements Source. A first page waits (a little) for what the
// program has: see prime.
func (l *Live) View(ctx context.Context, q Query) *View {
	l.prime(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.viewed = l.o.Now()
	st := l.st
	v := &View{Live: true, Target: l.addr, Title: l.addr, At: st.at, Refresh: l.o.Refresh}
	if st.err != nil {
		v.Problems = append(v.Problems, fmt.Sprintf("The program does not answer (%v); showing the reading of %s.", st.err, st.at.Format("15:04:05")))
	}
	if st.health == nil {
		v.Functions.Controls.Why = "no reading of the program yet"
		v.Modes.Controls = v.Functions.Controls
		v.Analyzer.Controls = v.Functions.Controls
		return v
	}
	h := st.health
	v.Process = Process{PID: h.PID, Go: h.Go, Uptime: time.Duration(h.UptimeSeconds * float64(time.Second)).Round(time.Second), Probes: h.Probes, ModeCounts: map[string]int{}}
	if h.Binary != "" {
		v.Title, v.Process.Binary = filepath.Base(h.Binary), h.Binary
	}
	for m, n := range h.Modes {
		v.Process.ModeCounts[string(m)] = n
	}
	v.Process.Sampling = settings.FormatPercent(h.Sampling)
	if h.EffectiveSampling != h.Sampling {
		v.Process.Sampling += " configured, " + human.Percent(h.EffectiveSampling) + " in force"
	}
	var ra *agg
	if l.recent != nil {
		ra = l.recent.agg
		if l.recent.err != nil && !isConflict(l.recent.err) {
			v.Problems = append(v.Problems, "Reading the recent records: "+l.recent.err.Error())
		}
	}
	if ra != nil && ra.header != nil && ra.header.Binary != "" {
		v.Title = filepath.Base(ra.header.Binary)
		v.Process.Binary, v.Process.Host = ra.header.Binary, ra.header.Host
	}
	v.Title = strings.TrimSuffix(v.Title, ".exe")
	controls := l.controls()
	v.Functions = l.functions(st, ra, q, controls)
	v.Analyzer = l.analyzerView(st, controls)
	v.Modes = modesView(st, controls)
	v.Writer = l.writerView(st)
	if ra != nil {
		v.Traces = treesView(ra, q, fmt.Sprintf("The slowest and the latest call trees among the program's last %s fine records (the end of its trace file, read %s)",
			count(uint64(ra.calls)), l.recent.at.Format("15:04:05")))
		v.Traces.Download = len(l.recent.data) > 0
	} else {
		v.Traces.Source = "Call trees come from the end of the program's trace file"
		v.Traces.Empty = "No fine records yet: the writer opens when a function is switched to fine (or the analyzer selects one); the page reads them while it is open."
	}
	return v
}

// isConflict tells the answer of a program without a trace file yet.
func isConflict(err error) bool {
	var e *adminclient.Error
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// controls says whether changes are possible, and if not, why.
func (l *Live) controls() Controls {
	st := &l.st
	var e *adminclient.Error
	switch {
	case l.o.ReadOnly:
		return Controls{Why: "tigris dash was started with --read-only"}
	case st.err != nil:
		return Controls{Why: "the program does not answer"}
	case errors.As(st.auth, &e) && e.Status == http.StatusUnauthorized:
		if !l.o.TokenGiven {
			return Controls{Why: "the program has an admin token and tigris dash was given none (start it with --token or TIGRIS_ADMIN_TOKEN; the token stays in tigris dash, never in this page)"}
		}
		return Controls{Why: "the program refused tigris dash's token: " + e.Body.Error}
	}
	return Controls{Enabled: true}
}

func (l *Live) functions(st liveState, ra *agg, q Query, c Controls) Functions {
	f := Functions{
		Source:   fmt.Sprintf("coarse statistics of every probe since the program started (%s ago)", elapsed(time.Duration(st.health.UptimeSeconds*float64(time.Second)))),
		Series:   fmt.Sprintf("calls per %s reading, the last %d", l.o.Refresh, l.o.Windows),
		Controls: c,
	}
	dists := map[string]*Dist{}
	if ra != nil {
		for _, fa := range ra.funcs {
			dists[fa.fn.Signature] = distOf(&fa.incl)
		}
		f.DistSource = fmt.Sprintf("the program's last %s fine records (functions in fine mode only; switch one to fine to see its distribution)", count(uint64(ra.calls)))
	} else {
		f.DistSource = "fine records, of the functions in fine mode (none yet)"
	}
	rows := make([]FuncRow, 0, len(st.stats.Stats))
	for _, s := range st.stats.Stats {
		r := FuncRow{
			ID: s.ID, Signature: s.Signature, Mode: string(s.Mode), Calls: s.Count, Errors: s.Errors, Panics: s.Panics,
			TotalNs: s.TotalNs, MeanNs: s.MeanNs, StdDevNs: s.StdDevNs, Dist: dists[s.Signature], Pattern: patternOf(s.Signature),
		}
		if p, ok := st.probes[s.ID]; ok {
			r.File, r.Line = p.file, p.line
		}
		switch {
		case s.Shed:
			r.Phase1, r.Phase1Why = "switched off by phase 1", s.TimingReason
		case s.TimedOneIn > 1:
			r.Phase1, r.Phase1Why = fmt.Sprintf("times 1 call in %d", s.TimedOneIn), s.TimingReason
		}
		if ser := l.series[s.ID]; ser != nil {
			for _, p := range ser.slice() {
				r.Series = append(r.Series, p.calls)
				r.SeriesMean = append(r.SeriesMean, p.meanNs)
			}
		}
		rows = append(rows, r)
	}
	f.Count = len(slices.DeleteFunc(slices.Clone(rows), func(r FuncRow) bool { return r.Calls == 0 }))
	f.Rows, f.Sort, f.All = sortRows(rows, q)
	return f
}

func (l *Live) analyzerView(st liveState, c Controls) Analyzer {
	an := Analyzer{Controls: c}
	if a := st.analysis; a != nil {
		an.Enabled, an.Criteria, an.Metrics = a.Enabled, a.Criteria, metricsOf(*a)
		an.Interval = time.Duration(a.Interval).String()
		if a.Window > 0 {
			an.Window = time.Duration(a.Window).String()
		}
		if a.Budget > 0 {
			an.Budget = settings.FormatPercent(a.Budget) + " of CPU"
		}
	} else {
		an.Err = "the analysis settings could not be read"
	}
	for i := len(st.history) - 1; i >= 0; i-- {
		h := &st.history[i]
		var parts []analyzer.Partition
		if len(h.Partitions) > 0 {
			_ = json.Unmarshal(h.Partitions, &parts)
		}
		an.Cycles = append(an.Cycles, cycleView(&h.Cycle, parts))
	}
	if len(an.Cycles) > 0 {
		an.Last = &an.Cycles[0]
	}
	an.Timeline = timeline(an.Cycles)
	fine := 0
	if st.health != nil {
		fine = st.health.Modes[settings.Fine]
	}
	var interval time.Duration
	if st.analysis != nil {
		interval = time.Duration(st.analysis.Interval)
	}
	an.Phase, an.Detail = phase(an.Enabled, interval, an.Last, fine, l.o.Now())
	return an
}

func modesView(st liveState, c Controls) Modes {
	m := Modes{Controls: c}
	if st.rules != nil {
		for _, r := range st.rules.Configured {
			m.Configured = append(m.Configured, Rule{Pattern: r.Pattern, Mode: string(r.Mode)})
		}
		for i, r := range st.rules.Manual {
			m.Manual = append(m.Manual, Rule{Index: i, Pattern: r.Pattern, Mode: string(r.Mode)})
		}
	}
	if s := st.sampling; s != nil {
		m.Sampling = Sampling{Configured: s.Percent, Effective: s.Percent, Reason: s.Reason}
		if s.Effective != s.Sampling {
			m.Sampling.Effective = human.Percent(s.Effective)
		}
	}
	return m
}

func (l *Live) writerView(st liveState) Writer {
	w := Writer{Note: "the program's trace writer: records handed to the file, records lost (queue full, write errors), records waiting in its queue"}
	if s := st.writer; s != nil {
		w.Active, w.File, w.Written, w.Dropped, w.Queued, w.Bytes, w.Files, w.Errors = s.Active, s.CurrentFile, s.Written, s.Dropped, s.Queued, s.Bytes, s.Files, s.Errors
	}
	w.WrittenSeries, w.DroppedSeries, w.QueuedSeries = l.written.slice(), l.dropped.slice(), l.queued.slice()
	return w
}

// Act implements Source: one change through the admin API, then a reading,
// so the page that follows shows its effect.
func (l *Live) Act(ctx context.Context, a Action) Flash {
	l.mu.Lock()
	c := l.controls()
	l.mu.Unlock()
	if !c.Enabled {
		return Flash{Text: "Not done: " + c.Why, Err: true}
	}
	f, err := l.act(ctx, a)
	if err != nil {
		var e *adminclient.Error
		if errors.As(err, &e) && e.Status == http.StatusUnauthorized {
			l.mu.Lock()
			l.st.auth, l.st.authAt = err, l.o.Now()
			l.mu.Unlock()
		}
		return Flash{Text: "Not done: " + err.Error(), Ctl: f.Ctl, Err: true}
	}
	l.Read(ctx)
	return f
}

func (l *Live) act(ctx context.Context, a Action) (Flash, error) {
	var f Flash
	mode := settings.Mode(strings.ToLower(a.Mode))
	switch a.Kind {
	case "mode", "rule":
		if _, err := settings.ParseMode(string(mode)); err != nil {
			return f, err
		}
		if strings.TrimSpace(a.Pattern) == "" {
			return f, errors.New("no pattern")
		}
		f.Ctl = fmt.Sprintf("tigris ctl rules add %s --mode %s", shellQuote(a.Pattern), mode)
		if a.Kind == "mode" {
			// Switching a function again changes its rule rather than
			// piling up rules: the whole list in one PUT.
			rl, err := l.c.Rules(ctx)
			if err != nil {
				return f, err
			}
			manual := slices.Clone(rl.Manual)
			if i := slices.IndexFunc(manual, func(r settings.Rule) bool { return r.Pattern == a.Pattern }); i >= 0 {
				manual[i].Mode = mode
				var args []string
				for _, r := range manual {
					args = append(args, shellQuote(string(r.Mode)+":"+r.Pattern))
				}
				f.Ctl = "tigris ctl rules set " + strings.Join(args, " ")
				if _, err := l.c.SetRules(ctx, manual); err != nil {
					return f, err
				}
				f.Text = fmt.Sprintf("Manual rule %d is now %s: %s", i, mode, a.Pattern)
				return f, nil
			}
		}
		rc, err := l.c.AddRule(ctx, settings.Rule{Pattern: a.Pattern, Mode: mode})
		if err != nil {
			return f, err
		}
		f.Text = fmt.Sprintf("Added manual rule %d: %s %s", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
	case "delete":
		f.Ctl = fmt.Sprintf("tigris ctl rules delete %d", a.Index)
		rl, err := l.c.Rules(ctx)
		if err != nil {
			return f, err
		}
		if a.Index < 0 || a.Index >= len(rl.Manual) || rl.Manual[a.Index].Pattern != a.Pattern {
			return f, errors.New("the manual rules changed since the page was drawn; nothing deleted (look again)")
		}
		rc, err := l.c.DeleteRule(ctx, a.Index)
		if err != nil {
			return f, err
		}
		f.Text = fmt.Sprintf("Deleted manual rule %d: %s %s", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
	case "sampling":
		f.Ctl = "tigris ctl sampling set " + shellQuote(a.Rate)
		s, err := l.c.SetSampling(ctx, a.Rate)
		if err != nil {
			return f, err
		}
		f.Text = "Sampling set to " + s.Percent
	case "run":
		f.Ctl = "tigris ctl analysis run"
		cy, err := l.c.RunAnalysis(ctx)
		if err != nil {
			return f, err
		}
		f.Text = fmt.Sprintf("Cycle %d: %d of %d candidates selected", cy.Seq, len(cy.Selected), cy.Candidates)
		if cy.Why != "" {
			f.Text += ": " + cy.Why
		}
	case "analysis":
		on := a.Enabled == "on"
		f.Ctl = "tigris ctl analysis set --enabled " + a.Enabled
		if _, err := l.c.SetAnalysis(ctx, adminclient.AnalysisChange{Enabled: &on}); err != nil {
			return f, err
		}
		f.Text = "Analysis turned " + map[bool]string{true: "on", false: "off"}[on]
	default:
		return f, fmt.Errorf("unknown action %q", a.Kind)
	}
	return f, nil
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '%' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Window implements Source: the recent records, or one call tree of them.
func (l *Live) Window(_ context.Context, trace uint64) (*writer.Reader, string, error) {
	l.mu.Lock()
	rw := l.recent
	l.mu.Unlock()
	if rw == nil || len(rw.data) == 0 {
		return nil, "", errors.New("no recent records read yet")
	}
	name := "recent-" + rw.at.Format("150405")
	if trace == 0 {
		return writer.NewReader(bytes.NewReader(rw.data)), name, nil
	}
	t := rw.agg.tree(trace)
	if t == nil {
		return nil, "", fmt.Errorf("no call tree %d among the recent records", trace)
	}
	data, err := extract(writer.NewReader(bytes.NewReader(rw.data)), t.Stream, t.Raw)
	if err != nil {
		return nil, "", err
	}
	return writer.NewReader(bytes.NewReader(data)), fmt.Sprintf("%s-trace-%d", name, trace), nil
}

// Close implements Source.
func (l *Live) Close() error { return nil }

// footprint counts what the Source holds: readings in the series and
// functions tracked, for the test that memory stays bounded.
func (l *Live) footprint() (points, funcs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.series {
		points += r.len()
	}
	points += l.written.len() + l.dropped.len() + l.queued.len()
	return points, len(l.prev)
}

// ring keeps the last len(buf) values pushed.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) ring[T] { return ring[T]{buf: make([]T, n)} }

func (r *ring[T]) push(v T) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	r.full = r.full || r.next == 0
}

func (r *ring[T]) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

// slice is the values, oldest first.
func (r *ring[T]) slice() []T {
	if !r.full {
		return slices.Clone(r.buf[:r.next])
	}
	return append(slices.Clone(r.buf[r.next:]), r.buf[:r.next]...)
}
