package queryout

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/live"
)

// TestCell pins how a table shows numbers: three significant digits, and
// durations with their unit; the JSON form keeps them whole.
func TestCell(t *testing.T) {
	for _, c := range []struct {
		v    query.Value
		want string
	}{
		{query.FloatValue(46.61608583), "46.6"},
		{query.FloatValue(2.63175e+07), "26.3M"},
		{query.FloatValue(1657), "1657"},
		{query.FloatValue(0.000123456), "0.000123"},
		{query.FloatValue(math.NaN()), "unknown"},
		{query.Value{T: query.Duration, I: int64(11039087524)}, "11s"},
		{query.Value{T: query.Duration, I: 271_345}, "271µs"},
		{query.IntValue(39531210), "39531210"},
		{query.StringValue("x"), "x"},
	} {
		if got := Cell(c.v); got != c.want {
			t.Errorf("Cell(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	var j JSON
	var b bytes.Buffer
	j.W = &b
	j.Row(0, []query.Value{query.FloatValue(46.61608583)})
	if got := b.String(); got != "{\"row\":[46.61608583]}\n" && got != "{\"schema\":0,\"row\":[46.61608583]}\n" {
		t.Errorf("JSON row %q: want the float whole", got)
	}
}

// TestPartialWindows: a streamed table marks the windows the query saw only
// part of: the one it started in, before its rows, and the ones its end cut
// short, before the end line.
func TestPartialWindows(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ts := func(s string) query.Value { return query.Value{T: query.Time, I: at(s).UnixNano()} }
	var b bytes.Buffer
	tab := &Table{W: &b, Started: at("2026-01-02T10:00:03.2Z")}
	tab.Schema(0, query.Schema{Name: "rows", Columns: []query.Column{{Name: "window_start", Type: query.Time}, {Name: "window_end", Type: query.Time}, {Name: "fn", Type: query.String}, {Name: "mean", Type: query.Float}}})
	for _, r := range [][]query.Value{
		{ts("2026-01-02T10:00:00Z"), ts("2026-01-02T10:00:10Z"), query.StringValue("a"), query.FloatValue(1.23456789)},
		{ts("2026-01-02T10:00:00Z"), ts("2026-01-02T10:00:10Z"), query.StringValue("b"), query.FloatValue(2)},
		{ts("2026-01-02T10:00:10Z"), ts("2026-01-02T10:00:20Z"), query.StringValue("a"), query.FloatValue(3)},
		{ts("2026-01-02T10:00:20Z"), ts("2026-01-02T10:00:30Z"), query.StringValue("a"), query.FloatValue(4)},
	} {
		if err := tab.Row(0, r); err != nil {
			t.Fatal(err)
		}
	}
	tab.Ended = at("2026-01-02T10:00:24.1Z")
	if err := tab.End("ended after 21s (--for)", map[string]uint64{"rows": 4}); err != nil {
		t.Fatal(err)
	}
	want := `WINDOW_START              WINDOW_END                FN                                        MEAN
(partial window 10:00:00.000Z–10:00:10.000Z: the query started at 10:00:03.200Z, so the rows below cover at most 6.8s of its 10s)
2026-01-02T10:00:00.000Z  2026-01-02T10:00:10.000Z  a                                         1.23
2026-01-02T10:00:00.000Z  2026-01-02T10:00:10.000Z  b                                         2
2026-01-02T10:00:10.000Z  2026-01-02T10:00:20.000Z  a                                         3
2026-01-02T10:00:20.000Z  2026-01-02T10:00:30.000Z  a                                         4
(partial window 10:00:20.000Z–10:00:30.000Z: the query ended at 10:00:24.100Z, so its rows above cover 4.1s of its 10s)
-- ended after 21s (--for) (rows 4)
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestLeftOutNotes: what a live query left out reads as a note among its
// rows: from when and why, and what a window lost.
func TestLeftOutNotes(t *testing.T) {
	at := time.Date(2026, 11, 25, 20, 46, 13, 204e6, time.UTC)
	from, to := time.Date(2026, 11, 25, 20, 46, 10, 0, time.UTC), time.Date(2026, 11, 25, 20, 46, 20, 0, time.UTC)
	for _, c := range []struct {
		d    live.Dropped
		want string
	}{
		{live.Dropped{Since: &at, Why: "taking one call in 4"}, "from 20:46:13.204Z calls are left out: taking one call in 4; the rows count only the calls taken"},
		{live.Dropped{From: &from, To: &to, Shed: 818, Lost: 3}, "20:46:10.000Z–20:46:20.000Z: the rows leave out 818 calls shed and 3 lost"},
		{live.Dropped{From: &from, To: &to, Lost: 3}, "20:46:10.000Z–20:46:20.000Z: the rows leave out 3 calls lost"},
	} {
		if got := LeftOut(&c.d); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
