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
func AggregateTrace(path string) ([]monitor.Stats, error) {
	r, err := writer.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	type acc struct {
		time, size   moments.Moments
		errs, panics uint64
		def          *writer.ProbeDef
	}
	byID := map[uint32]*acc{}
	get := func(id uint32) *acc {
		a := byID[id]
		if a == nil {
			a = &acc{}
			byID[id] = a
		}
		return a
	}
	var from, to int64 = math.MaxInt64, math.MinInt64
	for {
		item, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		switch item.Kind {
		case writer.KindProbe:
			get(item.Probe.ID).def = item.Probe
		case writer.KindRecord:
			rec := &item.Record
			a := get(rec.Probe)
			a.time.Add(float64(rec.TOut - rec.TIn))
			if rec.Flags&writer.FlagError != 0 {
				a.errs++
			}
			if rec.Flags&writer.FlagPanic != 0 {
				a.panics++
			}
			if rec.Flags&writer.FlagSize != 0 {
				a.size.Add(float64(rec.Size))
			}
			from, to = min(from, rec.TIn), max(to, rec.TOut)
		}
	}
	span := float64(to - from)
	var out []monitor.Stats
	for id, a := range byID {
		s := monitor.Stats{
			ID: id, Signature: fmt.Sprintf("probe %d", id), Count: uint64(a.time.N()),
			MeanNs: a.time.Mean(), StdDevNs: a.time.StdDev(), Errors: a.errs, Panics: a.panics,
			ResultSizeMean: a.size.Mean(), ResultSizeSD: a.size.StdDev(), Sized: uint64(a.size.N()),
		}
		if a.def != nil {
			s.Signature = a.def.Signature
		}
		if s.Count > 0 && span > 0 {
			s.InterArrivalNs = span / float64(s.Count)
			s.Concurrency = float64(s.Count) / span * s.MeanNs
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b monitor.Stats) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
