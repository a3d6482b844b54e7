package dash

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Source is where a page's data comes from: a running program (Live) or a
// trace file (File). Its methods are safe for concurrent use.
type Source interface {
	// View is the page for query q.
	View(ctx context.Context, q Query) *View
	// Act makes a change (live only) and says what it did, or why not.
	Act(ctx context.Context, a Action) Flash
	// Window is the recorded calls the page shows (trace 0), or one call
	// tree of them, to download; the caller closes the reader. name is a
	// file name without extension.
	Window(ctx context.Context, trace uint64) (r *writer.Reader, name string, err error)
	Close() error
}

// Query is what the page's URL asks for.
type Query struct {
	Sort  string // the functions' order: total (default), calls, mean, p99, errors, name
	All   bool   // every function, not the top ones (at most maxAllRows)
	Trace uint64 // the call tree to draw; 0: the slowest
	// TraceID draws the kept call tree that joined the request trace of
	// this W3C trace id (32 hex digits, as Jaeger shows it), when Trace is
	// 0; the page's ?trace= takes either.
	TraceID string
	// Group filters the functions to a group of the analyzer's evaluation
	// of a trace (groupKey: "criterion:level"); "" or unknown: none.
	Group string
}

// groupKey names group li (an index of levelNames) of criterion.
func groupKey(criterion string, li int) string { return criterion + ":" + levelNames[li] }

// splitGroupKey is groupKey's inverse (li 0 for an unknown level).
func splitGroupKey(k string) (criterion string, li int) {
	i := strings.LastIndexByte(k, ':')
	if i < 0 {
		return k, 0
	}
	return k[:i], max(slices.Index(levelNames[:], k[i+1:]), 0)
}

// Action is a change asked from the page. Every kind is one or two calls of
// the admin API, also possible with tigris ctl (the comment names the
// command).
type Action struct {
	Kind    string // mode, rule, delete, sampling, run, analysis
	Pattern string // mode, rule, delete: the rule's pattern
	Mode    string // mode, rule: off, coarse, fine
	Index   int    // delete: the manual rule's index
	Rate    string // sampling: "10%"
	Enabled string // analysis: on, off
}

// What one page lists at most, whatever the number of functions (a trace of
// 20,000 functions of long names made a page of hundreds of megabytes when
// the analyzer's groups listed them all):
const (
	// topRows is how many functions the table lists unless asked for all,
	// and maxAllRows how many it lists when asked.
	topRows    = 25
	maxAllRows = 200
	// maxMembers is how many functions a group of the analyzer lists (the
	// rest: a link to the table filtered to the group).
	maxMembers = 20
	// maxListed is how many functions a cycle's selection lists, and
	// maxChanges how many of its additions and of its removals the history
	// of cycles lists (their short names, clipped).
	maxListed  = 50
	maxChanges = 5
	// maxTimelineRows is how many functions the selections' timeline
	// shows: those selected most often.
	maxTimelineRows = 30
)

// sortKeys are the orders of the functions table.
var sortKeys = map[string]func(a, b *FuncRow) int{
	"total":  func(a, b *FuncRow) int { return cmp.Compare(b.TotalNs, a.TotalNs) },
	"calls":  func(a, b *FuncRow) int { return cmp.Compare(b.Calls, a.Calls) },
	"mean":   func(a, b *FuncRow) int { return cmp.Compare(b.MeanNs, a.MeanNs) },
	"p99":    func(a, b *FuncRow) int { return cmp.Compare(p99(b), p99(a)) },
	"errors": func(a, b *FuncRow) int { return cmp.Compare(b.Errors, a.Errors) },
	"name":   func(a, b *FuncRow) int { return strings.Compare(shortName(a.Signature), shortName(b.Signature)) },
}

func p99(r *FuncRow) float64 {
	if r.Dist == nil {
		return -1
	}
	return r.Dist.P99
}

// sortRows orders the rows as q asks and keeps the top ones; functions
// without calls are left out.
func sortRows(rows []FuncRow, q Query) ([]FuncRow, string, bool) {
	key := q.Sort
	by, ok := sortKeys[key]
	if !ok {
		key, by = "total", sortKeys["total"]
	}
	rows = slices.DeleteFunc(rows, func(r FuncRow) bool { return r.Calls == 0 })
	slices.SortStableFunc(rows, func(a, b FuncRow) int {
		return cmp.Or(by(&a, &b), strings.Compare(a.Signature, b.Signature))
	})
	all := q.All || len(rows) <= topRows
	switch {
	case !all:
		rows = rows[:topRows]
	case len(rows) > maxAllRows:
		rows = rows[:maxAllRows]
	}
	return rows, key, all
}

// treesView lists the kept call trees and details the one q asks for (the
// slowest by default).
func treesView(a *agg, q Query, source string) Traces {
	v := Traces{Source: source}
	kind := map[uint64]string{}
	var list []*keptTree
	for _, t := range a.slowest {
		kind[t.ID] = "slowest"
		list = append(list, t)
	}
	for i := len(a.latest) - 1; i >= 0; i-- {
		t := a.latest[i]
		if k, ok := kind[t.ID]; ok {
			kind[t.ID] = k + ", latest"
			continue
		}
		kind[t.ID] = "latest"
		list = append(list, t)
	}
	for _, t := range list {
		v.List = append(v.List, traceRow(a, t, kind[t.ID]))
		v.Joined = v.Joined || t.TraceID != ""
	}
	if len(list) == 0 {
		return v
	}
	show := list[0]
	if t := a.tree(q.Trace); t != nil {
		show = t
	} else if q.TraceID != "" {
		if i := slices.IndexFunc(list, func(t *keptTree) bool { return t.TraceID == q.TraceID }); i >= 0 {
			show = list[i]
		} else {
			v.NotKept = q.TraceID
		}
	}
	d := &TraceDetail{TraceRow: traceRow(a, show, kind[show.ID]), GID: show.GID, Truncated: show.Truncated}
	for _, n := range show.Nodes {
		d.Nodes = append(d.Nodes, TraceNode{
			Signature: a.funcs[n.Fn].fn.Signature, Depth: int(n.Depth), Parent: int(n.Parent), Missing: int(n.Missing),
			StartNs: float64(n.Start), DurNs: float64(n.Dur), SelfNs: float64(n.Self),
			Error: n.Flags&writer.FlagError != 0, Panic: n.Flags&writer.FlagPanic != 0,
		})
	}
	v.Shown = d
	return v
}

func traceRow(a *agg, t *keptTree, kind string) TraceRow {
	root := ""
	if len(t.Nodes) > 0 {
		root = a.funcs[t.Nodes[0].Fn].fn.Signature
	}
	return TraceRow{ID: t.ID, Root: root, Start: time.Unix(0, t.Start), DurNs: float64(t.Dur), Calls: t.Calls, Errors: t.Errors, Panics: t.Panics, Kind: kind, TraceID: t.TraceID}
}

// diff is what next adds to and removes from prev (both sorted or not).
func diff(prev, next []string) (added, removed []string) {
	for _, s := range next {
		if !slices.Contains(prev, s) {
			added = append(added, s)
		}
	}
	for _, s := range prev {
		if !slices.Contains(next, s) {
			removed = append(removed, s)
		}
	}
	return added, removed
}

// count formats n with thousands separators: 1,234,567.
func count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// extract re-encodes the records of one call tree of r (stream index, the
// process's trace id) as a trace stream of their own, with the stream's
// header and the definitions of their probes.
func extract(r *writer.Reader, stream int, trace uint64) ([]byte, error) {
	var (
		hdr      *writer.Header
		defs     = map[uint32]writer.ProbeDef{}
		recs     []writer.Record
		cur      = -1
		streamID uint64
	)
	for {
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch it.Kind {
		case writer.KindHeader:
			if cur < 0 || it.Header.Stream != streamID {
				cur++
				streamID = it.Header.Stream
			}
			if cur == stream {
				hdr = it.Header
			}
		case writer.KindProbe:
			if cur == stream || cur < 0 && stream == 0 {
				defs[it.Probe.ID] = *it.Probe
			}
		case writer.KindRecord:
			if (cur == stream || cur < 0 && stream == 0) && it.Record.Trace == trace {
				recs = append(recs, it.Record)
			}
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("trace %d has no records in the file", trace)
	}
	return encode(hdr, defs, recs)
}

// encode writes a trace stream of recs with the definitions they need,
// through a temporary file (the writer's only output).
func encode(hdr *writer.Header, defs map[uint32]writer.ProbeDef, recs []writer.Record) ([]byte, error) {
	f, err := os.CreateTemp("", "tigris-dash-*.tgr")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	o := writer.Options{Path: path}
	if hdr != nil {
		o.Host, o.PID, o.Binary, o.Clock = hdr.Host, hdr.PID, hdr.Binary, hdr.Clock
	}
	w, err := writer.NewSync(o)
	if err != nil {
		return nil, err
	}
	done := map[uint32]bool{}
	for _, r := range recs {
		if d, ok := defs[r.Probe]; ok && !done[r.Probe] {
			done[r.Probe] = true
			w.Define(d)
		}
	}
	for i := range recs {
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
