package dash

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/dsl"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// File is a Source of one recorded run: a trace file (and the files rotation
// made from it), read once and summarized when it is opened, so a page costs
// only the rendering, whatever the file's size.
type File struct {
	path     string
	agg      *agg
	rep      traceconv.Report
	analysis settings.Analysis
	an       Analyzer // the evaluation, computed once
	// groups are the functions (ids) of each group of the whole run's
	// evaluation, by groupKey, for the functions table's filter.
	groups map[string][]uint32
	took   time.Duration
}

// FileOptions configure OpenFile.
type FileOptions struct {
	// Analysis is the filter the analyzer section evaluates over the run
	// (offline.Settings finds tigris.yaml's).
	Analysis settings.Analysis
	// Progress, when set, is called every million records read.
	Progress func(records int64, elapsed time.Duration)
}

// Numbers of the page: trees kept of each kind (slowest, latest), calls kept
// of one tree, windows of a series.
const (
	keepTrees = 12
	maxNodes  = 3000
	maxSeries = 60
)

// OpenFile reads and summarizes the trace at path. Memory follows the
// functions and the traces in flight (package traceconv), not the records.
func OpenFile(path string, o FileOptions) (*File, error) {
	r, _, err := traceconv.Open([]string{path})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	began := time.Now()
	f := &File{path: path, agg: newAgg(keepTrees, maxNodes, maxSeries), analysis: o.Analysis}
	opt := traceconv.Options{}
	if o.Progress != nil {
		opt.Progress = func(p traceconv.Progress) {
			if !p.Done {
				o.Progress(p.Records, p.Elapsed)
			}
		}
	}
	f.rep, err = traceconv.Walk(r, opt, func(t *traceconv.Tree) error { f.agg.add(t); return nil })
	if err != nil {
		return nil, err
	}
	if f.rep.Empty() {
		msg := fmt.Sprintf("%s: no trace records, header or probe definition", path)
		if f.rep.ReadErr != nil {
			msg += ": " + f.rep.ReadErr.Error()
		}
		return nil, errors.New(msg)
	}
	f.agg.finish()
	f.an = f.evaluate()
	f.took = time.Since(began)
	return f, nil
}

// Took is how long reading and summarizing the file took.
func (f *File) Took() time.Duration { return f.took }

// Records is the number of records read.
func (f *File) Records() int64 { return f.rep.Records }

// View implements Source.
func (f *File) View(_ context.Context, q Query) *View {
	a := f.agg
	v := &View{Target: f.path, Title: filepath.Base(f.path), At: time.Now()}
	if h := a.header; h != nil {
		v.Process = Process{PID: h.PID, Host: h.Host, Binary: h.Binary}
		if h.Binary != "" {
			v.Title = filepath.Base(h.Binary) + " · " + filepath.Base(f.path)
		}
	}
	v.Process.Span = time.Duration(a.last - a.first)
	v.Problems = f.rep.Warnings()

	rows := make([]FuncRow, 0, len(a.funcs))
	group, grouped := f.groups[q.Group]
	if grouped {
		for _, id := range group {
			rows = append(rows, f.row(int(id-1), a.funcs[id-1]))
		}
	} else {
		for i, fa := range a.funcs {
			rows = append(rows, f.row(i, fa))
		}
	}
	v.Functions = Functions{
		Count:      len(rows),
		Source:     fmt.Sprintf("every recorded call of the run (%s records, %s)", count(uint64(f.rep.Records)), human.Duration(v.Process.Span)),
		DistSource: "the same calls",
		Series:     fmt.Sprintf("calls per %s window of the run: %d windows, the width chosen from the run's %s", human.Duration(time.Duration(a.width)), a.used, human.Duration(v.Process.Span)),
		Controls:   Controls{Why: "a trace file is a record of a finished run: there is nothing to switch (tigris dash ADDR shows a running program)"},
	}
	if grouped {
		crit, li := splitGroupKey(q.Group)
		v.Functions.Group = fmt.Sprintf("the %s functions of the run's group %q of criterion %s", count(uint64(len(rows))), levelNames[li], crit)
	}
	v.Functions.Rows, v.Functions.Sort, v.Functions.All = sortRows(rows, q)

	v.Analyzer = f.an
	v.Modes = Modes{
		Recorded: len(a.funcs),
		Controls: Controls{Why: v.Functions.Controls.Why},
	}
	v.Traces = treesView(a, q, "the slowest and the latest call trees of the run")
	v.Traces.Download = true
	v.Writer = Writer{
		Active: true, File: f.path, Written: uint64(f.rep.Records), Dropped: f.rep.Lost,
		Files: f.rep.Files, Gaps: f.rep.Gaps, Skipped: f.rep.SkippedBytes, Losses: f.rep.Losses,
		Warnings: f.rep.Warnings(),
		Note:     "what the reader found in the file: records written by the program, records it reported lost, damage skipped",
	}
	return v
}

// row is one function's line of the table.
func (f *File) row(i int, fa *funcAcc) FuncRow {
	r := FuncRow{
		ID: uint32(i + 1), Signature: fa.fn.Signature, File: fa.fn.File, Line: fa.fn.Line,
		Calls: fa.calls, Errors: fa.errors, Panics: fa.panics,
		TotalNs: fa.inclNs, Pattern: patternOf(fa.fn.Signature),
	}
	if fa.calls > 0 {
		r.MeanNs, r.StdDevNs = fa.inclNs/float64(fa.calls), fa.time.sd()
	}
	r.Dist = distOf(&fa.incl)
	r.Series = make([]float64, f.agg.used)
	r.SeriesMean = make([]float64, f.agg.used)
	for j := range min(len(fa.series), f.agg.used) {
		b := &fa.series[j]
		r.Series[j] = float64(b.time.n)
		r.SeriesMean[j] = b.time.mean()
	}
	return r
}

// distOf summarizes a histogram, nil when it is empty.
func distOf(h *hist) *Dist {
	if h.n == 0 {
		return nil
	}
	return &Dist{N: h.n, P50: h.quantile(0.5), P95: h.quantile(0.95), P99: h.quantile(0.99), Max: float64(h.max), Bins: h.bins(24)}
}

// evaluate runs the analyzer's selection over the whole run, and replays it
// over the run's windows as the cycles of a program would have run.
func (f *File) evaluate() Analyzer {
	a := f.agg
	an := Analyzer{
		Enabled: true, Criteria: f.analysis.Criteria, Metrics: metricsOf(f.analysis),
		Replay:   fmt.Sprintf("evaluated offline over the recorded calls (sampled calls of the functions that were fine): the whole run, and each of its %d windows of %s as a cycle", a.used, human.Duration(time.Duration(a.width))),
		Controls: Controls{Why: "a trace file cannot be switched"},
	}
	if st := staticCriteria(f.analysis); len(st) > 0 {
		an.Err = fmt.Sprintf("the filter uses static metrics a trace does not carry: %s (bind other metrics with --metric, or look at the running program)", joinOr(st))
		return an
	}
	sig := func(id uint32) string { return a.funcs[id-1].fn.Signature }
	// members are, per partition and group, the functions' ids, most of
	// the criterion first (by the metric, the direction applied).
	var members [][5][]uint32
	eval := func(seq, from, to int) (Cycle, error) {
		ev, err := analyzer.Evaluate(a.stats(from, to), f.analysis)
		if err != nil {
			return Cycle{}, err
		}
		c := analyzer.Cycle{Seq: seq, Criteria: ev.Filter.String(), Candidates: len(ev.Candidates), Why: ev.Result.Why, Reasons: map[string][]string{}, Sampling: 1, Trigger: "replay"}
		// Result.Selected by id, reasons for those the page lists (the
		// evaluation finds a candidate by a search: all would cost the
		// square of the functions).
		for i, id := range ev.Result.Selected {
			s := sig(id)
			c.Selected = append(c.Selected, s)
			if i < maxListed {
				c.Reasons[s] = ev.Reasons(id)
			}
		}
		at := a.start + int64(to)*a.width
		c.At = time.Unix(0, at)
		c.Window = settings.Duration(time.Duration(int64(to-from) * a.width))
		cv := cycleView(&c, ev.Partitions())
		if seq == 0 {
			members = groupMembers(ev)
			for pi := range cv.Partitions {
				for li, ids := range members[pi] {
					for _, id := range ids {
						cv.Partitions[pi].Members[li] = append(cv.Partitions[pi].Members[li], sig(id))
					}
				}
			}
		}
		return cv, nil
	}
	whole, err := eval(0, 0, a.used)
	if err != nil {
		an.Err = err.Error()
		return an
	}
	whole.Trigger, whole.Window = "the whole run", human.Duration(time.Duration(a.last-a.first))
	an.Last = &whole
	f.groups = map[string][]uint32{}
	for pi, p := range whole.Partitions {
		for li, ids := range members[pi] {
			f.groups[groupKey(p.Criterion, li)] = ids
		}
	}
	var prev []string
	for j := 0; j < a.used; j++ {
		c, err := eval(j+1, j, j+1)
		if err != nil {
			continue
		}
		c.Added, c.Removed = diff(prev, c.Selected)
		prev = c.Selected
		an.Cycles = append([]Cycle{c}, an.Cycles...)
	}
	an.Timeline = timeline(an.Cycles)
	an.Phase = "Replayed on a recorded run"
	an.Detail = fmt.Sprintf("%d of %d functions selected over the whole run", len(whole.Selected), whole.Candidates)
	return an
}

// groupMembers lists, per partition of ev and group, the candidates' ids,
// most of the criterion first: by the metric's value, highest first unless
// a higher value is less of the criterion.
func groupMembers(ev *analyzer.Evaluation) [][5][]uint32 {
	out := make([][5][]uint32, len(ev.Result.Groupings))
	for gi := range ev.Result.Groupings {
		g := &ev.Result.Groupings[gi]
		var idx [5][]int
		for i, l := range g.Levels {
			if li := slices.Index(dsl.Levels[:], l); li >= 0 {
				idx[li] = append(idx[li], i)
			}
		}
		value := func(i int) float64 {
			v, _ := analyzer.Metric(&ev.Candidates[i], g.Metric)
			if g.Direction == dsl.HigherIsLess {
				return -v
			}
			return v
		}
		for li := range idx {
			slices.SortStableFunc(idx[li], func(a, b int) int { return cmp.Compare(value(b), value(a)) })
			for _, i := range idx[li] {
				out[gi][li] = append(out[gi][li], ev.Result.IDs[i])
			}
		}
	}
	return out
}

// Act implements Source: a file cannot be switched.
func (f *File) Act(context.Context, Action) Flash {
	return Flash{Text: "Not done: a trace file cannot be switched", Err: true}
}

// Window implements Source: the file, or one call tree of it.
func (f *File) Window(_ context.Context, trace uint64) (*writer.Reader, string, error) {
	name := strings.TrimSuffix(filepath.Base(f.path), filepath.Ext(f.path))
	r, _, err := traceconv.Open([]string{f.path})
	if err != nil || trace == 0 {
		return r, name, err
	}
	defer r.Close()
	t := f.agg.tree(trace)
	if t == nil {
		return nil, "", fmt.Errorf("no call tree %d on the page", trace)
	}
	data, err := extract(r, t.Stream, t.Raw)
	if err != nil {
		return nil, "", err
	}
	return writer.NewReader(bytes.NewReader(data)), fmt.Sprintf("%s-trace-%d", name, trace), nil
}

// Close implements Source.
func (f *File) Close() error { return nil }
