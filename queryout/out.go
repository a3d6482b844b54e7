package queryout

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/query"

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
// usual width.
type Table struct {
	W        io.Writer
	Buffered bool
	schemas  map[int]query.Schema
	rows     map[int][][]string
	order    []int
	widths   map[int][]int
	current  int
}

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
		cells[i] = v.String()
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
	return t.line(schema, cells)
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
	var parts []string
	for _, k := range sorted.Keys(stats) {
		if stats[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, stats[k]))
		}
	}
	_, err := fmt.Fprintf(t.W, "-- %s (%s)\n", reason, strings.Join(parts, ", "))
	return err
}
