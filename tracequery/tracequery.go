package tracequery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tigrisgo/tigris/queryout"
	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// Options configure Run.
type Options struct {
	// Lateness is how far, in trace time, records may come out of order: a
	// window is emitted once a record this much later than its end has been
	// read. Records are written as calls end, per producer queue, so they
	// are out of order by about the writer's flush interval. 0 means
	// DefaultLateness.
	Lateness time.Duration
	// Limits, when set, refuse plans as a running program would (tigris
	// query applies none by default: a file costs nothing to read).
	Limits engine.Limits
	// MaxCPU bounds the CPU time of the query: the process's, from Run's
	// start (compiling, planning, reading the files, running), read every
	// 20 ms of wall time (engine.CPUTime). Beyond it Run stops with a *CPUError. 0: no bound; tigris
	// query's default is DefaultMaxCPU.
	MaxCPU time.Duration
	// MaxJoined bounds the joined traces whose W3C trace ids a query that
	// reads trace_id keeps (joined.go): past it, a trace's calls show
	// trace_id '' and Summary.JoinedDropped counts its remote parent. 0
	// means DefaultMaxJoined.
	MaxJoined int
}

// DefaultLateness is Options.Lateness's default.
const DefaultLateness = 10 * time.Second

// Summary is what Run read and could not use.
type Summary struct {
	Records uint64 // fine records read
	Lost    uint64 // records the program's writer lost (loss items)
	Gaps    int    // damaged or torn parts of the files
	// JoinedDropped counts the remote parents past Options.MaxJoined: their
	// traces' calls show trace_id ''.
	JoinedDropped uint64
	Stats         engine.Stats
}

// Run compiles text (CREATE STREAMs, then one SELECT or trigger; EXPLAINs
// print plans) and runs it over the trace files at paths, printing to out.
func Run(ctx context.Context, paths []string, text string, opt Options, out queryout.Printer) (Summary, error) {
	var sum Summary
	if opt.Lateness <= 0 {
		opt.Lateness = DefaultLateness
	}
	cpu := newCPUBound(opt.MaxCPU)
	qs, err := query.Compile(text, nil)
	if err != nil {
		return sum, err
	}
	var run *query.Query
	var explains []*query.Query
	for _, q := range qs {
		switch {
		case q.Explain && q.Kind != query.KindStream:
			explains = append(explains, q)
		case q.Kind == query.KindStream:
		case run != nil:
			return sum, fmt.Errorf("%s: one query at a time over a trace (the text has more after %s)", q.Text, run.Text)
		default:
			run = q
		}
	}
	// A record may come before its trace's remote parent (joined.go): the
	// catalog pass keeps them all when the query reads trace_id.
	var remotes *joined
	if run != nil && run.ReadsTraceID() {
		remotes = newJoined(opt.MaxJoined)
	}
	cat, err := readCatalog(paths, cpu, remotes)
	if err != nil {
		return sum, err
	}
	for _, q := range explains {
		p, err := engine.New(q, cat, opt.Limits)
		if err != nil {
			return sum, err
		}
		if err := out.Note("EXPLAIN\n" + p.Explain()); err != nil {
			return sum, err
		}
	}
	if run == nil {
		return sum, nil
	}
	p, err := engine.New(run, cat, opt.Limits)
	if err != nil {
		return sum, err
	}
	if p.Refused != "" {
		return sum, fmt.Errorf("query refused: %s\n%s", p.Refused, p.Explain())
	}
	for _, l := range p.Leaves {
		if l.Every > 0 {
			return sum, fmt.Errorf("%s: SAMPLE(%s, ...) reads the running program; a trace file has no %s readings (run the query with tigris ctl query)", l.Path, l.Stream.Name, l.Stream.Name)
		}
	}
	return runOver(ctx, paths, p, cat, remotes, cpu, out, opt)
}

// catalog is the probes a trace defines.
type catalog struct {
	probes []*engine.Probe
	byID   map[uint32]*engine.Probe
}

func (c *catalog) Probes() []*engine.Probe { return c.probes }
func (c *catalog) Costs() engine.Costs     { return engine.Costs{} }

// readCatalog reads the probe definitions of the files and, when remotes is
// not nil, keeps their remote parents there.
func readCatalog(paths []string, cpu *cpuBound, remotes *joined) (*catalog, error) {
	r, _, err := traceconv.Open(paths)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := &catalog{byID: map[uint32]*engine.Probe{}}
	var stream uint64
	for n := 0; ; n++ {
		if n%256 == 0 && cpu.over() {
			return nil, cpu.err
		}
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch it.Kind {
		case writer.KindHeader:
			stream = it.Header.Stream
		case writer.KindRemote:
			if remotes != nil {
				remotes.add(stream, &it.Remote)
			}
		}
		if it.Kind != writer.KindProbe || c.byID[it.Probe.ID] != nil {
			continue
		}
		d := it.Probe
		p := &engine.Probe{ID: d.ID, Function: engine.Symbol(d.Signature), Package: d.Package, Receiver: d.Recv, Name: d.Name,
			Signature: d.Signature, File: d.File, Line: d.Line, Mode: "fine", Rate: -1,
			Sig: engine.SignatureOf(d.Signature, d.Package, d.Recv, d.Name, d.File, d.Line)}
		c.probes = append(c.probes, p)
		c.byID[d.ID] = p
	}
	return c, nil
}

// runOver feeds the records of the files to the plan's runner.
func runOver(ctx context.Context, paths []string, p *engine.Plan, cat *catalog, remotes *joined, cpu *cpuBound, out queryout.Printer, opt Options) (Summary, error) {
	var sum Summary
	r, skipped, err := traceconv.Open(paths)
	if err != nil {
		return sum, err
	}
	defer r.Close()
	for _, e := range skipped {
		if err := out.Note(e.Error()); err != nil {
			return sum, err
		}
	}
	if remotes != nil && remotes.dropped > 0 {
		sum.JoinedDropped = remotes.dropped
		msg := fmt.Sprintf("trace_id: %d traces joined a request's trace past the first %d the query keeps; their calls show trace_id ''", remotes.dropped, remotes.max)
		if err := out.Note(msg); err != nil {
			return sum, err
		}
	}
	// Which leaf wants which probe: the plan's acquisition, as a running
	// program's taps would deliver.
	wants := make([]map[uint32]bool, len(p.Leaves))
	for i, l := range p.Leaves {
		wants[i] = map[uint32]bool{}
		for _, n := range l.Probes {
			wants[i][n.Probe.ID] = true
		}
	}
	schemas := map[int]bool{}
	var perr error
	emit := func(schema int, s query.Schema, t int64, vals []query.Value) {
		if perr != nil {
			return
		}
		if !schemas[schema] {
			schemas[schema] = true
			if perr = out.Schema(schema, s); perr != nil {
				return
			}
		}
		perr = out.Row(schema, vals)
	}
	q := p.Query
	main := query.Schema{Name: "rows", Columns: q.Schema}
	actions := query.Schema{Name: "actions", Columns: []query.Column{{Name: "trigger", Type: query.String}, {Name: "action", Type: query.String}, {Name: "result", Type: query.String}}}
	runner := engine.NewRunner(p, func(row engine.Row) {
		emit(0, main, row.Time, row.Vals)
		if q.Kind == query.KindTrigger {
			for i, a := range q.Actions {
				emit(1, actions, row.Time, []query.Value{query.StringValue(q.Name), query.StringValue(a.Text), query.StringValue(wouldDo(a, p.Actions[i]))})
			}
		}
	})
	// The engine's long loops (a join's pairs, a window's groups) ask too.
	runner.SetStop(cpu.over)
	var clock writer.ClockBase
	var stream uint64 // the header's: trace ids are a stream's own
	maxEnd := int64(math.MinInt64)
	lateness := int64(opt.Lateness)
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if n%16 == 0 && cpu.over() {
			sum.Stats = runner.Stats()
			return sum, cpu.err
		}
		it, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		switch it.Kind {
		case writer.KindHeader:
			clock, stream = it.Header.Clock, it.Header.Stream
		case writer.KindLoss:
			sum.Lost += it.Loss.Count
		case writer.KindGap:
			sum.Gaps++
		case writer.KindRecord:
			sum.Records++
			rec := &it.Record
			pr := cat.byID[rec.Probe]
			if pr == nil {
				continue
			}
			t := engine.Tuple{Call: engine.Call{Probe: pr,
				Start: clock.Wall + (rec.TIn - clock.Mono), End: clock.Wall + (rec.TOut - clock.Mono),
				GID: rec.GID, Trace: rec.Trace, Depth: rec.ESS, Flags: engine.CallTraced, TraceID: remotes.of(stream, rec.Trace)}}
			t.Time = t.Call.End
			if rec.Flags&writer.FlagError != 0 {
				t.Call.Flags |= engine.CallError
			}
			if rec.Flags&writer.FlagPanic != 0 {
				t.Call.Flags |= engine.CallPanic
			}
			for i := range p.Leaves {
				if wants[i][rec.Probe] {
					runner.Push(i, &t)
				}
			}
			if t.Time > maxEnd {
				maxEnd = t.Time
				runner.Advance(maxEnd - lateness)
			}
			if perr != nil {
				return sum, perr
			}
			if runner.Done() {
				sum.Stats = runner.Stats()
				return sum, out.End(fmt.Sprintf("LIMIT %d reached", q.Limit), stats(sum))
			}
		}
	}
	end := maxEnd
	if end == math.MinInt64 {
		end = 0
	}
	runner.Finish(end)
	sum.Stats = runner.Stats()
	if perr != nil {
		return sum, perr
	}
	if cpu.err != nil {
		return sum, cpu.err
	}
	return sum, out.End("end of trace", stats(sum))
}

// wouldDo says what a trigger action would have done in the program.
func wouldDo(a *query.ActionSpec, probes []*engine.Probe) string {
	switch {
	case a.Pointcut != nil:
		return fmt.Sprintf("would switch %d probe(s) fine for %v (not run over a trace)", len(probes), a.For)
	case a.Sample != nil:
		return fmt.Sprintf("would sample %s every %v for %v (not run over a trace)", a.Sample.Name, a.Every, a.For)
	}
	return "would snapshot the recent records (not run over a trace)"
}

func stats(s Summary) map[string]uint64 {
	m := map[string]uint64{"records": s.Records, "tuples": s.Stats.Tuples, "rows": s.Stats.Rows, "late": s.Stats.Late,
		"lost": s.Lost, "droppedGroups": s.Stats.DroppedGroups, "joinDropped": s.Stats.JoinDropped}
	if s.JoinedDropped > 0 {
		m["traceIdsNotKept"] = s.JoinedDropped
	}
	return m
}
