package traceconv

import (
	"bufio"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// FuncStats summarizes the recorded calls of one function. Functions are told
// apart by signature and definition site, so the same function in several
// processes' files is one entry.
type FuncStats struct {
	Signature string `json:"function"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Calls     int64  `json:"calls"`
	Errors    int64  `json:"errors"` // calls that returned a non-nil error
	Panics    int64  `json:"panics"` // calls that ended by panicking
	// Unfinished are the calls that had not returned when the program's
	// writer closed (writer.FlagUnfinished), not counted in Calls: their
	// duration is unknown, so they are in no Dist.
	Unfinished int64 `json:"unfinished,omitempty"`
	// Inclusive is the calls' duration; Exclusive the part not spent in recorded
	// callees (see writer.Node).
	Inclusive Dist `json:"inclusive"`
	Exclusive Dist `json:"exclusive"`
	// MaxTraceID is the W3C trace id of the request whose trace the slowest
	// call joined (32 hex digits), "" when its trace joined none: the request
	// to look up in Jaeger or Tempo.
	MaxTraceID string `json:"maxTraceId,omitempty"`
}

// Dist summarizes durations. Quantiles are exact up to 256 calls and within
// 1.6 % beyond. In JSON every value is integer nanoseconds.
type Dist struct {
	Total time.Duration `json:"total"`
	Mean  time.Duration `json:"mean"`
	P50   time.Duration `json:"p50"`
	P95   time.Duration `json:"p95"`
	Max   time.Duration `json:"max"`
}

// Summarize reads r, rebuilds its call trees and summarizes the calls per
// function, in no particular order (see SortStats). Memory grows with the
// number of functions, not of records.
func Summarize(r *writer.Reader, opt Options) ([]FuncStats, Report, error) {
	var rep Report
	type acc struct {
		key                  funcKey
		idx                  int
		calls, errors, panic int64
		unfinished           int64
		incl, excl           durDist
		maxDur               int64
		maxRemote            [16]byte // the slowest call's trace's W3C id, zero if none
	}
	var accs []*acc
	byKey := make(map[funcKey]*acc)
	err := scanTrees(r, opt, &rep, func(s *stream, t *writer.Trace) error {
		for i := range t.Nodes {
			n := &t.Nodes[i]
			p := s.probe(n.Record.Probe)
			if p.idx < 0 {
				k := funcKey{name: p.sig}
				if p.def != nil {
					k.file, k.line = p.def.File, p.def.Line
				}
				a := byKey[k]
				if a == nil {
					a = &acc{key: k, idx: len(accs)}
					byKey[k] = a
					accs = append(accs, a)
				}
				p.idx = a.idx
			}
			a := accs[p.idx]
			if n.Record.Unfinished() {
				a.unfinished++
				continue
			}
			a.calls++
			if n.Record.Flags&writer.FlagError != 0 {
				a.errors++
			}
			if n.Record.Flags&writer.FlagPanic != 0 {
				a.panic++
			}
			a.incl.add(int64(n.Inclusive))
			a.excl.add(int64(n.Exclusive))
			if d := int64(n.Inclusive); d > a.maxDur || a.calls == 1 {
				a.maxDur, a.maxRemote = d, [16]byte{}
				if t.Remote != nil {
					a.maxRemote = t.Remote.TraceID
				}
			}
		}
		return nil
	}, nil)
	if err != nil {
		return nil, rep, err
	}
	out := make([]FuncStats, len(accs))
	for i, a := range accs {
		out[i] = FuncStats{
			Signature: a.key.name, File: a.key.file, Line: a.key.line,
			Calls: a.calls, Errors: a.errors, Panics: a.panic, Unfinished: a.unfinished,
			Inclusive: a.incl.summary(), Exclusive: a.excl.summary(),
		}
		if a.maxRemote != ([16]byte{}) {
			out[i].MaxTraceID = tracecontext.FormatTraceID(a.maxRemote)
		}
	}
	return out, rep, nil
}

// ParseTraceID reads a W3C trace id as Jaeger, Tempo and a traceparent show
// it: 32 hex digits, not all zero.
func ParseTraceID(s string) (id [16]byte, err error) {
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("%q is not a W3C trace id: want 32 hex digits", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil || id == ([16]byte{}) {
		return [16]byte{}, fmt.Errorf("%q is not a W3C trace id: want 32 hex digits, not all zero", s)
	}
	return id, nil
}

func (d *durDist) summary() Dist {
	return Dist{
		Total: time.Duration(d.total), Mean: time.Duration(d.mean()),
		P50: time.Duration(d.quantile(0.50)), P95: time.Duration(d.quantile(0.95)),
		Max: time.Duration(d.max),
	}
}

// statColumn is one column of the stats table.
type statColumn struct {
	name  string
	value func(*FuncStats) time.Duration // nil for counts
	count func(*FuncStats) int64
}

// statColumns are the columns of the stats table, in order.
var statColumns = []statColumn{
	{name: "calls", count: func(f *FuncStats) int64 { return f.Calls }},
	{name: "errors", count: func(f *FuncStats) int64 { return f.Errors }},
	{name: "panics", count: func(f *FuncStats) int64 { return f.Panics }},
	{name: "total", value: func(f *FuncStats) time.Duration { return f.Inclusive.Total }},
	{name: "mean", value: func(f *FuncStats) time.Duration { return f.Inclusive.Mean }},
	{name: "p50", value: func(f *FuncStats) time.Duration { return f.Inclusive.P50 }},
	{name: "p95", value: func(f *FuncStats) time.Duration { return f.Inclusive.P95 }},
	{name: "max", value: func(f *FuncStats) time.Duration { return f.Inclusive.Max }},
	{name: "self", value: func(f *FuncStats) time.Duration { return f.Exclusive.Total }},
	{name: "self-mean", value: func(f *FuncStats) time.Duration { return f.Exclusive.Mean }},
	{name: "self-p50", value: func(f *FuncStats) time.Duration { return f.Exclusive.P50 }},
	{name: "self-p95", value: func(f *FuncStats) time.Duration { return f.Exclusive.P95 }},
	{name: "self-max", value: func(f *FuncStats) time.Duration { return f.Exclusive.Max }},
}

// StatColumnNames lists what SortStats accepts: the table's columns, then
// "function".
func StatColumnNames() []string {
	names := make([]string, 0, len(statColumns)+1)
	for _, c := range statColumns {
		names = append(names, c.name)
	}
	return append(names, "function")
}

// SortStats sorts fs by a column: numbers largest first, "function" in
// alphabetical order; ties go alphabetically by function.
func SortStats(fs []FuncStats, column string) error {
	byName := func(a, b *FuncStats) int {
		return cmp.Or(strings.Compare(a.Signature, b.Signature), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	}
	if column == "function" || column == "name" {
		slices.SortFunc(fs, func(a, b FuncStats) int { return byName(&a, &b) })
		return nil
	}
	for _, c := range statColumns {
		if c.name != column {
			continue
		}
		key := func(f *FuncStats) int64 {
			if c.count != nil {
				return c.count(f)
			}
			return int64(c.value(f))
		}
		slices.SortFunc(fs, func(a, b FuncStats) int {
			return cmp.Or(cmp.Compare(key(&b), key(&a)), byName(&a, &b))
		})
		return nil
	}
	return fmt.Errorf("unknown column %q (want one of %s)", column, strings.Join(StatColumnNames(), ", "))
}

// WriteStatsTable writes fs as an aligned table, one function per line, the
// function's signature last. Durations have three significant digits.
func WriteStatsTable(w io.Writer, fs []FuncStats) error {
	rows := make([][]string, 0, len(fs)+1)
	head := make([]string, 0, len(statColumns)+1)
	for _, c := range statColumns {
		head = append(head, strings.ToUpper(c.name))
	}
	// The request trace of the slowest call, when some trace joined one.
	joined := slices.ContainsFunc(fs, func(f FuncStats) bool { return f.MaxTraceID != "" })
	if joined {
		head = append(head, "MAX-TRACE-ID")
	}
	rows = append(rows, append(head, "FUNCTION"))
	for i := range fs {
		f := &fs[i]
		row := make([]string, 0, len(statColumns)+2)
		for _, c := range statColumns {
			if c.count != nil {
				row = append(row, strconv.FormatInt(c.count(f), 10))
			} else {
				row = append(row, human.Duration(c.value(f)))
			}
		}
		if joined {
			row = append(row, cmp.Or(f.MaxTraceID, "-"))
		}
		rows = append(rows, append(row, f.Signature))
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i := range width {
			width[i] = max(width[i], utf8.RuneCountInString(row[i]))
		}
	}
	bw := bufio.NewWriter(w)
	for _, row := range rows {
		for i := range width {
			// Right-aligned by characters: "µs" is two bytes.
			bw.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(row[i])))
			bw.WriteString(row[i])
			bw.WriteString("  ")
		}
		bw.WriteString(row[len(row)-1])
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteStatsJSON writes fs as a JSON array; durations are integer nanoseconds.
func WriteStatsJSON(w io.Writer, fs []FuncStats) error {
	if fs == nil {
		fs = []FuncStats{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(fs)
}
