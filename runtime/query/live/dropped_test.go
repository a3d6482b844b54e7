package live

import (
	"strings"
	"testing"
	"time"
)

// droppedOf splits a stream's {"dropped":...} lines into its starts (their
// reasons) and the sums of its counts, checking each count's span against
// want (0: any).
func droppedOf(t *testing.T, lines []map[string]any, want time.Duration) (starts []string, shed, lost uint64, firstCount, firstStart int) {
	t.Helper()
	firstCount, firstStart = -1, -1
	for i, l := range lines {
		d, ok := l["dropped"].(map[string]any)
		if !ok {
			continue
		}
		if why, ok := d["why"].(string); ok {
			starts = append(starts, why)
			if firstStart < 0 {
				firstStart = i
			}
			if _, err := time.Parse(time.RFC3339Nano, d["since"].(string)); err != nil {
				t.Errorf("since of %v: %v", d, err)
			}
			continue
		}
		if firstCount < 0 {
			firstCount = i
		}
		from, err1 := time.Parse(time.RFC3339Nano, d["from"].(string))
		to, err2 := time.Parse(time.RFC3339Nano, d["to"].(string))
		if err1 != nil || err2 != nil || !to.After(from) || want > 0 && to.Sub(from) != want {
			t.Errorf("count %v: from %v to %v (%v %v)", d, from, to, err1, err2)
		}
		s, _ := d["shed"].(float64)
		o, _ := d["lost"].(float64)
		if s == 0 && o == 0 {
			t.Errorf("a count of nothing: %v", d)
		}
		shed += uint64(s)
		lost += uint64(o)
	}
	return starts, shed, lost, firstCount, firstStart
}

// TestLeftOutSaidWithTheRows: a query that sheds calls (taking one in 4)
// and loses some (its queue of 8 overflows) says so among its rows: a line
// when it starts, with why, then a count per window of what each left
// out, which sum to the end line's shed and lost.
func TestLeftOutSaidWithTheRows(t *testing.T) {
	setup(t)
	opts := fastOptions()
	opts.Queue, opts.oneIn = 8, 4
	reg := NewRegistry(opts)
	for _, c := range []struct {
		text   string
		window time.Duration
	}{
		{"SELECT count(*) FROM calls WHERE name = 'Hash' WINDOW 50ms", 50 * time.Millisecond},
		{"SELECT name FROM calls WHERE name = 'Hash'", 0},
	} {
		p, err := reg.Post(c.text, false)
		if err != nil {
			t.Fatal(err)
		}
		q := p[0].Query
		for round := 0; round < 6; round++ {
			for i := 0; i < 100; i++ {
				call(&probes[2], 0, nil)
			}
			time.Sleep(40 * time.Millisecond)
		}
		q.Cancel()
		lines := read(t, q)
		starts, shed, lost, firstCount, firstStart := droppedOf(t, lines, c.window)
		end := lines[len(lines)-1]["stats"].(map[string]any)
		if shed == 0 || lost == 0 || float64(shed) != end["shed"].(float64) || float64(lost) != end["lost"].(float64) {
			t.Errorf("%s: counts sum to %d shed and %d lost; the end line says %v and %v", c.text, shed, lost, end["shed"], end["lost"])
		}
		said := strings.Join(starts, "\n")
		if !strings.Contains(said, "the query's queue was full (8 calls a source): calls are lost") || !strings.Contains(said, "taking one call in 4") {
			t.Errorf("%s: the starts say:\n%s", c.text, said)
		}
		firstRow := -1
		for i, l := range lines {
			if _, ok := l["row"]; ok && firstRow < 0 {
				firstRow = i
			}
		}
		if firstStart < 0 || firstStart > firstCount || firstStart > firstRow {
			t.Errorf("%s: the first start at line %d, the first count at %d, the first row at %d", c.text, firstStart, firstCount, firstRow)
		}
		if t.Failed() || testing.Verbose() {
			for _, l := range lines {
				t.Logf("%v", l)
			}
		}
	}
}
