package queryout

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/live"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/sorted"
)

// Printer receives a query's output: schemas before their first row, rows,
// notes (what was skipped or lost) and the end.
type Printer interface {
	Schema(i int, s query.Schema) error
	Row(schema int, vals []query.Value) error
	Note(msg string) error
	End(reason string, stats map[string]uint64) error
}

// JSON writes the wire form: one JSON line per schema, row and end.
type JSON struct {
	W io.Writer
	b []byte
}

func (j *JSON) Schema(i int, s query.Schema) error {
	j.b = query.AppendSchema(j.b[:0], i, s)
	_, err := j.W.Write(j.b)
	return err
}

func (j *JSON) Row(schema int, vals []query.Value) error {
	j.b = query.AppendRow(j.b[:0], schema, vals)
	_, err := j.W.Write(j.b)
	return err
}

// Note writes nothing: the wire form has its own lines for losses.
func (j *JSON) Note(string) error { return nil }

func (j *JSON) End(reason string, stats map[string]uint64) error {
	b := append(j.b[:0], `{"end":`...)
	b = appendQuoted(b, reason)
	b = append(b, `,"stats":{`...)
	for i, k := range sorted.Keys(stats) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, k)
		b = append(b, fmt.Sprintf(":%d", stats[k])...)
	}
	b = append(b, "}}\n"...)
	j.b = b
	_, err := j.W.Write(b)
	return err
}

func appendQuoted(b []byte, s string) []byte { return append(b, fmt.Sprintf("%q", s)...) }

// Table prints rows as aligned columns under a header per schema. Buffered
// tables (a trace file: every row is known before printing) align each
// column to its widest cell; streamed ones (a running program) print each
// row when it comes, in columns as wide as their header or their type's
// usual width. Numbers are rounded for reading (Cell); the JSON form keeps
// them whole.
type Table struct {
	W        io.Writer
	Buffered bool
	// Started and Ended are when the query started and ended (zero:
	// unknown; set Ended before End). A window that began before Started or
	// ends after Ended is partial: the table says so under a streamed
	// window's first row, or before the end line, with how much of the
	// window the query saw.
	Started, Ended time.Time
	schemas        map[int]query.Schema
	rows           map[int][][]string
	order          []int
	widths         map[int][]int
	current        int
	// windows are those of the rows printed, in order: the last
	// query.MaxSlides, as many as a tuple can fall into, for End's notes.
	windows []span
}

// span is a window of rows: [start, end) in Unix ns.
type span struct{ start, end int64 }

func (t *Table) init() {
	if t.schemas == nil {
		t.schemas, t.rows, t.widths, t.current = map[int]query.Schema{}, map[int][][]string{}, map[int][]int{}, -1
	}
}

func (t *Table) Schema(i int, s query.Schema) error {
	t.init()
	t.schemas[i] = s
	t.order = append(t.order, i)
	w := make([]int, len(s.Columns))
	for c, col := range s.Columns {
		w[c] = utf8.RuneCountInString(col.Name)
		if !t.Buffered {
			if tw := typeWidth(col.Type); tw > w[c] {
				w[c] = tw
			}
		}
	}
	t.widths[i] = w
	return nil
}

// typeWidth is the width a streamed column gets for its type.
func typeWidth(ty query.Type) int {
	switch ty {
	case query.Time:
		return 24
	case query.String:
		return 40
	case query.Bool:
		return 5
	}
	return 10
}

func (t *Table) Row(schema int, vals []query.Value) error {
	t.init()
	cells := make([]string, len(vals))
	for i, v := range vals {
		cells[i] = Cell(v)
	}
	if t.Buffered {
		t.rows[schema] = append(t.rows[schema], cells)
		return nil
	}
	if schema != t.current {
		if err := t.line(schema, names(t.schemas[schema])); err != nil {
			return err
		}
		t.current = schema
	}
	if w, ok := windowOf(t.schemas[schema], vals); ok && t.remember(w) && !t.Started.IsZero() && w.start < t.Started.UnixNano() && t.Started.UnixNano() < w.end {
		if err := t.Note(partial(w, "the query started at "+clock(t.Started.UnixNano())+", so the rows below cover at most", w.end-t.Started.UnixNano())); err != nil {
			return err
		}
	}
	return t.line(schema, cells)
}

// Cell is how a table shows v: floats with three significant digits,
// durations likewise (271µs, 11s); other values as v.String().
func Cell(v query.Value) string {
	switch v.T {
	case query.Float:
		return human.Num(v.F)
	case query.Duration:
		return human.Duration(time.Duration(v.I))
	}
	return v.String()
}

// windowOf is the window of a row whose schema starts with window_start and
// window_end.
func windowOf(s query.Schema, vals []query.Value) (span, bool) {
	c := s.Columns
	if len(c) < 2 || len(vals) < 2 || c[0].Name != "window_start" || c[1].Name != "window_end" || vals[0].T != query.Time || vals[1].T != query.Time {
		return span{}, false
	}
	return span{vals[0].I, vals[1].I}, true
}

// remember notes a window printed, and reports whether it is new.
func (t *Table) remember(w span) bool {
	for i := len(t.windows) - 1; i >= 0; i-- {
		if t.windows[i] == w {
			return false
		}
	}
	if len(t.windows) == query.MaxSlides {
		t.windows = t.windows[1:]
	}
	t.windows = append(t.windows, w)
	return true
}

// partial is the note of a window the query saw only part of (saw ns).
func partial(w span, why string, saw int64) string {
	return fmt.Sprintf("partial window %s–%s: %s %s of its %s", clock(w.start), clock(w.end), why,
		human.Duration(time.Duration(saw)), human.Duration(time.Duration(w.end-w.start)))
}

// clock is the time of day of Unix ns t, as the rows' times have it.
func clock(t int64) string { return time.Unix(0, t).UTC().Format("15:04:05.000Z") }

// endNotes are the notes of the windows printed that were cut short by the
// query's end: at most three, and how many more.
func (t *Table) endNotes() []string {
	if t.Ended.IsZero() {
		return nil
	}
	end := t.Ended.UnixNano()
	var notes []string
	more := 0
	for _, w := range t.windows {
		if w.end <= end || w.start >= end {
			continue
		}
		if len(notes) == 3 {
			more++
			continue
		}
		from := w.start
		if s := t.Started.UnixNano(); !t.Started.IsZero() && s > from {
			from = s
		}
		notes = append(notes, partial(w, "the query ended at "+clock(end)+", so its rows above cover", end-from))
	}
	if more > 0 {
		notes = append(notes, fmt.Sprintf("%d more partial windows end after the query did", more))
	}
	return notes
}

func names(s query.Schema) []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = strings.ToUpper(c.Name)
	}
	return out
}

// line prints cells padded to schema's widths (the last cell unpadded).
func (t *Table) line(schema int, cells []string) error {
	w := t.widths[schema]
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(c)
		if i < len(cells)-1 && i < len(w) {
			if pad := w[i] - utf8.RuneCountInString(c); pad > 0 {
				b.WriteString(strings.Repeat(" ", pad))
			}
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(t.W, b.String())
	return err
}

func (t *Table) Note(msg string) error {
	_, err := fmt.Fprintf(t.W, "(%s)\n", msg)
	return err
}

// End prints buffered rows, one table per schema, and the end line.
func (t *Table) End(reason string, stats map[string]uint64) error {
	t.init()
	if t.Buffered {
		for n, i := range t.order {
			if n > 0 {
				fmt.Fprintln(t.W)
			}
			if len(t.order) > 1 {
				fmt.Fprintf(t.W, "%s:\n", t.schemas[i].Name)
			}
			tw := tabwriter.NewWriter(t.W, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, strings.Join(names(t.schemas[i]), "\t"))
			for _, r := range t.rows[i] {
				fmt.Fprintln(tw, strings.Join(r, "\t"))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if !t.Buffered {
		for _, n := range t.endNotes() {
			if err := t.Note(n); err != nil {
				return err
			}
		}
	}
	var parts []string
	for _, k := range sorted.Keys(stats) {
		if stats[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, stats[k]))
		}
	}
	_, err := fmt.Fprintf(t.W, "-- %s (%s)\n", reason, strings.Join(parts, ", "))
	return err
}

// LeftOut is the note of what a live query left out, said among its rows
// (its {"dropped":...} line): from when and why it leaves calls out, or
// what one window (without WINDOW, one second) left out.
func LeftOut(d *live.Dropped) string {
	if d.Since != nil {
		return fmt.Sprintf("from %s calls are left out: %s; the rows count only the calls taken", clock(d.Since.UnixNano()), d.Why)
	}
	var parts []string
	if d.Shed > 0 {
		parts = append(parts, fmt.Sprintf("%d calls shed", d.Shed))
	}
	if d.Lost > 0 && d.Shed > 0 {
		parts = append(parts, fmt.Sprintf("%d lost", d.Lost))
	} else if d.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d calls lost", d.Lost))
	}
	span := ""
	if d.From != nil && d.To != nil {
		span = clock(d.From.UnixNano()) + "–" + clock(d.To.UnixNano()) + ": "
	}
	return span + "the rows leave out " + strings.Join(parts, " and ")
}
