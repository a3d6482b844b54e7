package admin

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func (a *api) index(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, Index{Endpoints: append(slices.Clone(endpoints), "/metrics")})
	return nil
}

// filter is the probe selection of GET probes, stats and metrics: ?pointcut=
// (a pattern, as in rules) and ?mode=.
type filter struct {
	pc   *pointcut.Pointcut // nil: every probe
	mode settings.Mode      // "": any mode
}

func parseFilter(r *http.Request) (filter, error) {
	var f filter
	q := r.URL.Query()
	if expr := q.Get("pointcut"); expr != "" {
		pc, err := monitor.ParsePattern(expr)
		if err != nil {
			return f, badRequest("pointcut", err)
		}
		f.pc = pc
	}
	if m := q.Get("mode"); m != "" {
		mode, err := settings.ParseMode(m)
		if err != nil {
			return f, badRequest("mode", err)
		}
		f.mode = mode
	}
	return f, nil
}

// probes returns the probes f selects, by id.
func (f filter) probes() []monitor.ProbeStatus {
	ps := monitor.Probes(f.pc)
	if f.mode != "" {
		ps = slices.DeleteFunc(ps, func(p monitor.ProbeStatus) bool { return p.Mode != f.mode })
	}
	if ps == nil {
		ps = []monitor.ProbeStatus{}
	}
	return ps
}

// stats returns the statistics of the probes f selects, by id.
func (f filter) stats() []monitor.Stats {
	var keep map[uint32]bool // nil: every probe
	if f.pc != nil {
		keep = map[uint32]bool{}
		for _, p := range monitor.Probes(f.pc) {
			keep[p.ID] = true
		}
	}
	return slices.DeleteFunc(monitor.Snapshot(), func(s monitor.Stats) bool {
		return keep != nil && !keep[s.ID] || f.mode != "" && s.Mode != f.mode
	})
}

func (a *api) probes(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ProbeList{Probes: f.probes()})
	return nil
}

func ruleList() RuleList {
	c, m := monitor.Rules()
	return RuleList{Configured: orEmpty(c), Manual: orEmpty(m)}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (a *api) rules(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, ruleList())
	return nil
}

// checkRule validates a rule before anything changes, so the reply can name the
// field (prefix+"pattern", prefix+"mode") and the column: settings' rule for
// rules (the one tigris.yaml and TIGRIS_RULES get), then the pattern's syntax. It
// normalises the mode ("Fine" → "fine").
func checkRule(prefix string, rule settings.Rule) (settings.Rule, error) {
	if m, err := settings.ParseMode(string(rule.Mode)); err == nil {
		rule.Mode = m // a bad mode is reported by CheckRule
	}
	if err := settings.CheckRule(prefix, rule); err != nil {
		return rule, settingsError(err)
	}
	if _, err := monitor.ParsePattern(rule.Pattern); err != nil {
		return rule, badRequest(prefix+"pattern", err)
	}
	return rule, nil
}

// settingsError is the reply to an error of package settings: a 400 about the
// first field it names.
func settingsError(err error) *apiError {
	var es settings.Errors
	var fe *settings.FieldError
	switch {
	case errors.As(err, &es) && len(es) > 0:
		fe = es[0]
	case errors.As(err, &fe):
	default:
		return errorf(http.StatusBadRequest, "%v", err)
	}
	return badRequest(fe.Field, fe)
}

func (a *api) addRule(w http.ResponseWriter, r *http.Request) error {
	var rule settings.Rule
	if err := decodeBody(r, &rule); err != nil {
		return err
	}
	rule, err := checkRule("", rule)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, manual := monitor.Rules(); settings.CheckManualRules(len(manual)+1) != nil {
		e := badRequest("rules", fmt.Errorf("there are %d manual rules already, the limit (delete some first: DELETE %srules/{i}, or PUT %srules)", len(manual), Prefix, Prefix))
		e.status = http.StatusConflict
		return e
	}
	i, err := monitor.AddRule(rule)
	if err != nil {
		return badRequest("pattern", err)
	}
	writeJSON(w, http.StatusCreated, RuleChange{Index: i, Rule: rule})
	return nil
}

func (a *api) setRules(w http.ResponseWriter, r *http.Request) error {
	var req RuleSet
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Rules == nil {
		return badRequest("rules", errors.New(`missing (want {"rules": [{"pattern": "...", "mode": "fine"}, ...]}; [] clears the manual rules)`))
	}
	if err := settings.CheckManualRules(len(*req.Rules)); err != nil {
		return settingsError(err)
	}
	rules := make([]settings.Rule, len(*req.Rules))
	for i, rule := range *req.Rules {
		var err error
		if rules[i], err = checkRule(fmt.Sprintf("rules[%d].", i), rule); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := monitor.SetRules(rules); err != nil {
		return badRequest("rules", err)
	}
	writeJSON(w, http.StatusOK, ruleList())
	return nil
}

func (a *api) deleteRule(w http.ResponseWriter, r *http.Request) error {
	s := r.PathValue("i")
	i, err := strconv.Atoi(s)
	if err != nil {
		return badRequest("index", fmt.Errorf("%q is not a rule index (want 0, 1, ... as GET rules lists the manual rules)", s))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, manual := monitor.Rules()
	if i < 0 || i >= len(manual) {
		return errorf(http.StatusNotFound, "no manual rule %d (there are %d; GET %srules lists them)", i, len(manual), Prefix)
	}
	rule := manual[i]
	if err := monitor.DeleteRule(i); err != nil {
		// Only a program calling monitor.DeleteRule itself could get here.
		return errorf(http.StatusConflict, "deleting rule %d: %v", i, err)
	}
	writeJSON(w, http.StatusOK, RuleChange{Index: i, Rule: rule})
	return nil
}

func samplingState() SamplingState {
	s := monitor.CurrentSampling()
	return SamplingState{
		Sampling: s.Configured, Percent: settings.FormatPercent(s.Configured),
		Effective: s.Effective, EffectivePercent: settings.FormatPercent(s.Effective), Reason: s.Reason,
	}
}

func (a *api) sampling(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, samplingState())
	return nil
}

func (a *api) setSampling(w http.ResponseWriter, r *http.Request) error {
	var req SamplingRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Sampling == nil {
		return badRequest("sampling", errors.New(`missing (want {"sampling": 0.1} or {"sampling": "10%"})`))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := monitor.SetSampling(float64(*req.Sampling)); err != nil {
		return badRequest("sampling", err)
	}
	writeJSON(w, http.StatusOK, samplingState())
	return nil
}

// statKey orders stats rows by one column.
type statKey struct {
	cmp  func(a, b *StatsRow) int
	desc bool // the default order: biggest first for quantities
}

func byNum[T cmp.Ordered](f func(*StatsRow) T) func(a, b *StatsRow) int {
	return func(a, b *StatsRow) int { return cmp.Compare(f(a), f(b)) }
}

var statKeys = map[string]statKey{
	"id":           {byNum(func(s *StatsRow) uint32 { return s.ID }), false},
	"signature":    {byNum(func(s *StatsRow) string { return s.Signature }), false},
	"mode":         {byNum(func(s *StatsRow) settings.Mode { return s.Mode }), false},
	"count":        {byNum(func(s *StatsRow) uint64 { return s.Count }), true},
	"mean":         {byNum(func(s *StatsRow) float64 { return s.MeanNs }), true},
	"stddev":       {byNum(func(s *StatsRow) float64 { return s.StdDevNs }), true},
	"total":        {byNum(func(s *StatsRow) float64 { return s.TotalNs }), true},
	"errors":       {byNum(func(s *StatsRow) uint64 { return s.Errors }), true},
	"panics":       {byNum(func(s *StatsRow) uint64 { return s.Panics }), true},
	"concurrency":  {byNum(func(s *StatsRow) float64 { return s.Concurrency }), true},
	"interarrival": {byNum(func(s *StatsRow) float64 { return s.InterArrivalNs }), false},
	"resultsize":   {byNum(func(s *StatsRow) float64 { return s.ResultSizeSD }), true},
	"cyclomatic":   {byNum(func(s *StatsRow) int { return s.Cyclomatic }), true},
}

// SortKeys are the values GET stats accepts for ?sort=, in alphabetical order.
var SortKeys = slices.Sorted(func(yield func(string) bool) {
	for k := range statKeys {
		if !yield(k) {
			return
		}
	}
})

func (a *api) stats(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	sortBy := cmp.Or(q.Get("sort"), "total")
	key, ok := statKeys[sortBy]
	if !ok {
		return badRequest("sort", fmt.Errorf("%q is not a sort key (want one of %s)", sortBy, strings.Join(SortKeys, ", ")))
	}
	desc := key.desc
	switch order := q.Get("order"); order {
	case "":
	case "asc":
		desc = false
	case "desc":
		desc = true
	default:
		return badRequest("order", fmt.Errorf("%q is not an order (want asc or desc)", order))
	}
	top := 0
	if s := q.Get("top"); s != "" {
		if top, err = strconv.Atoi(s); err != nil || top < 0 {
			return badRequest("top", fmt.Errorf("%q is not a row count (want an integer ≥ 0; 0 = all)", s))
		}
	}

	rows := []StatsRow{}
	for _, s := range f.stats() {
		rows = append(rows, StatsRow{Stats: s, TotalNs: float64(s.Count) * s.MeanNs})
	}
	slices.SortStableFunc(rows, func(x, y StatsRow) int {
		c := key.cmp(&x, &y)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(x.ID, y.ID))
	})
	matched := len(rows)
	if top > 0 && top < len(rows) {
		rows = rows[:top]
	}
	order := "asc"
	if desc {
		order = "desc"
	}
	writeJSON(w, http.StatusOK, StatsList{Sort: sortBy, Order: order, Matched: matched, Stats: rows})
	return nil
}

func writerState() WriterState {
	s, ok := monitor.WriterStats()
	return WriterState{
		Active: ok, Queued: s.Queued, Written: s.Written, Dropped: s.Dropped, Bytes: s.Bytes,
		Files: s.Files, CurrentFile: s.CurrentFile, Errors: s.Errors,
	}
}

func (a *api) writer(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, writerState())
	return nil
}

func (a *api) health(w http.ResponseWriter, r *http.Request) error {
	ps := monitor.Probes(nil)
	modes := map[settings.Mode]int{settings.Off: 0, settings.Coarse: 0, settings.Fine: 0}
	for _, p := range ps {
		modes[p.Mode]++
	}
	_, writing := monitor.WriterStats()
	s := monitor.CurrentSampling()
	exe, _ := os.Executable()
	writeJSON(w, http.StatusOK, Health{
		Status: "ok", PID: os.Getpid(), Go: runtime.Version(),
		UptimeSeconds: time.Since(started).Seconds(),
		Probes:        len(ps), Modes: modes, Writer: writing,
		Sampling: s.Configured, EffectiveSampling: s.Effective, SamplingReason: s.Reason,
		Binary: exe,
	})
	return nil
}
