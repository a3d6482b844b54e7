package offline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/tigrisgo/tigris/internal/moments"
	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Input is the statistics to analyze and where they came from.
type Input struct {
	Path string
	// Trace is set when the statistics were aggregated from a trace file: they
	// count sampled calls only and carry no static metrics.
	Trace bool
	Stats []monitor.Stats
}

// Load reads a statistics snapshot (JSON: the first non-blank byte is [ or {)
// or a trace file (anything else).
func Load(path string) (Input, error) {
	in := Input{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return in, err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	f.Close()
	if t := bytes.TrimLeft(head[:n], " \t\r\n\ufeff"); len(t) > 0 && (t[0] == '[' || t[0] == '{') {
		data, err := os.ReadFile(path)
		if err != nil {
			return in, err
		}
		in.Stats, err = DecodeSnapshot(data)
		if err != nil {
			return in, fmt.Errorf("%s: %w", path, err)
		}
		return in, nil
	}
	in.Trace = true
	in.Stats, err = AggregateTrace(path)
	return in, err
}

// DecodeSnapshot decodes []monitor.Stats or {"stats": [...]}. A snapshot from a
// monitor without the "sized" field has its result sizes taken as known when they
// are not zero. Missing or repeated ids are renumbered.
func DecodeSnapshot(data []byte) ([]monitor.Stats, error) {
	var raw []json.RawMessage
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		var obj struct {
			Stats []json.RawMessage `json:"stats"`
		}
		if err := json.Unmarshal(t, &obj); err != nil {
			return nil, fmt.Errorf("decoding the statistics snapshot: %w", err)
		}
		if obj.Stats == nil {
			return nil, errors.New(`no "stats" array (want the JSON of GET /tigris/v1/stats: an array of statistics or {"stats": [...]})`)
		}
		raw = obj.Stats
	} else if err := json.Unmarshal(t, &raw); err != nil {
		return nil, fmt.Errorf("decoding the statistics snapshot: %w", err)
	}
	stats := make([]monitor.Stats, len(raw))
	seen := map[uint32]bool{}
	renumber := false
	for i, r := range raw {
		var presence struct {
			Sized *uint64 `json:"sized"`
		}
		if err := json.Unmarshal(r, &stats[i]); err != nil {
			return nil, fmt.Errorf("statistics entry %d: %w", i, err)
		}
		_ = json.Unmarshal(r, &presence)
		s := &stats[i]
		if presence.Sized == nil && (s.ResultSizeMean != 0 || s.ResultSizeSD != 0) {
			s.Sized = s.Count
		}
		if s.Signature == "" {
			s.Signature = fmt.Sprintf("probe %d", s.ID)
		}
		renumber = renumber || s.ID == 0 || seen[s.ID]
		seen[s.ID] = true
	}
	if renumber {
		for i := range stats {
			stats[i].ID = uint32(i + 1)
		}
	}
	return stats, nil
}

// AggregateTrace turns a trace file's records into per-probe statistics, as the
// monitor's coarse statistics would have counted the recorded calls. Damage is
// skipped as the reader does; the span is from the first entry to the last exit.
// Calls still running when the program's writer closed (unfinished records)
// are left out, as the coarse statistics leave them: their duration is
// unknown.
func AggregateTrace(path string) ([]monitor.Stats, error) {
	a := &aggregate{byID: map[uint32]*acc{}, from: math.MaxInt64, to: math.MinInt64}
	err := readTrace(path, func(id uint32, def *writer.ProbeDef) { a.get(id).def = def },
		func(rec *writer.Record, _ *writer.Header) { a.add(rec) })
	if err != nil {
		return nil, err
	}
	return a.stats(float64(a.to - a.from)), nil
}

// AggregateTraceWindows is AggregateTrace over windows of the trace, as the
// live analyzer sees its statistics: window i holds the calls that ended (the
// monitor counts a call at its exit) in [from+i·stride, from+i·stride+window),
// for every such window that ends by to, its span its length (windows overlap
// when stride is shorter than window). from and to are wall-clock instants,
// which the file's header maps the records' times to. Every window lists every
// probe the trace defines, so a probe that did not run in a window has Count 0
// there.
func AggregateTraceWindows(path string, from, to time.Time, window, stride time.Duration) ([][]monitor.Stats, error) {
	if window <= 0 || stride <= 0 {
		return nil, fmt.Errorf("aggregating %s: window %v every %v, want positive lengths", path, window, stride)
	}
	if to.Sub(from) < window {
		return nil, nil
	}
	n := int((to.Sub(from)-window)/stride) + 1
	defs := map[uint32]*writer.ProbeDef{}
	wins := make([]*aggregate, n)
	for i := range wins {
		wins[i] = &aggregate{byID: map[uint32]*acc{}}
	}
	err := readTrace(path, func(id uint32, def *writer.ProbeDef) { defs[id] = def },
		func(rec *writer.Record, h *writer.Header) {
			if h == nil {
				return // no header: the records' times cannot be placed
			}
			at := h.Clock.Time(rec.TOut).Sub(from)
			if at < 0 {
				return
			}
			// The windows holding at: those starting in (at-window, at].
			for i := max(0, int((at-window)/stride)); i < n && time.Duration(i)*stride <= at; i++ {
				if at < time.Duration(i)*stride+window {
					wins[i].add(rec)
				}
			}
		})
	if err != nil {
		return nil, err
	}
	out := make([][]monitor.Stats, n)
	for i, w := range wins {
		for id, def := range defs {
			w.get(id).def = def
		}
		out[i] = w.stats(float64(window))
	}
	return out, nil
}

// readTrace reads the trace file at path, calling probe for every probe
// definition and record for every record of a call that returned, with the
// header of its file.
func readTrace(path string, probe func(uint32, *writer.ProbeDef), record func(*writer.Record, *writer.Header)) error {
	r, err := writer.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		item, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		switch item.Kind {
		case writer.KindProbe:
			probe(item.Probe.ID, item.Probe)
		case writer.KindRecord:
			if !item.Record.Unfinished() { // no exit: no duration (AggregateTrace)
				record(&item.Record, r.Header())
			}
		}
	}
}

// acc accumulates one probe's recorded calls.
type acc struct {
	time, size   moments.Moments
	errs, panics uint64
	def          *writer.ProbeDef
}

// aggregate accumulates the recorded calls of every probe, and the span from
// the first entry to the last exit.
type aggregate struct {
	byID     map[uint32]*acc
	from, to int64
}

func (a *aggregate) get(id uint32) *acc {
	c := a.byID[id]
	if c == nil {
		c = &acc{}
		a.byID[id] = c
	}
	return c
}

func (a *aggregate) add(rec *writer.Record) {
	c := a.get(rec.Probe)
	c.time.Add(float64(rec.TOut - rec.TIn))
	if rec.Flags&writer.FlagError != 0 {
		c.errs++
	}
	if rec.Flags&writer.FlagPanic != 0 {
		c.panics++
	}
	if rec.Flags&writer.FlagSize != 0 {
		c.size.Add(float64(rec.Size))
	}
	a.from, a.to = min(a.from, rec.TIn), max(a.to, rec.TOut)
}

// stats are the accumulated statistics, by id; span (ns) gives the rates.
func (a *aggregate) stats(span float64) []monitor.Stats {
	var out []monitor.Stats
	for id, c := range a.byID {
		s := monitor.Stats{
			ID: id, Signature: fmt.Sprintf("probe %d", id), Count: uint64(c.time.N()),
			MeanNs: c.time.Mean(), StdDevNs: c.time.StdDev(), Errors: c.errs, Panics: c.panics,
			ResultSizeMean: c.size.Mean(), ResultSizeSD: c.size.StdDev(), Sized: uint64(c.size.N()),
		}
		if c.def != nil {
			s.Signature = c.def.Signature
		}
		if s.Count > 0 && span > 0 {
			s.InterArrivalNs = span / float64(s.Count)
			s.Concurrency = float64(s.Count) / span * s.MeanNs
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b monitor.Stats) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
