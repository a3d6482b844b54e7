package query

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzCompile: any text compiles or gives an *Error with a position inside
// it, never panics, and allocates a bounded amount per input byte; an
// accepted statement's canonical text compiles to itself.
func FuzzCompile(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("engine", "testdata", "paper", "*.sql"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(string(b))
	}
	for _, s := range []string{
		"SELECT function, count(*), p99(duration) FROM calls WHERE duration > 5ms GROUP BY function WINDOW 10s SLIDE 5s HAVING count(*) > 1 LIMIT 5",
		"SELECT * FROM calls WHERE name NOT LIKE 'a%_' AND NOT (error OR panicked) AND line IN (1, 2, 3)",
		"EXPLAIN SELECT -duration * 2 / 3 + 1ms, percentile(duration, 99%) FROM calls GROUP BY name",
		"SELECT", "SELECT * FROM", "'", "--", ";;;", "SELECT ((((1))))", "1h30m", "70%%", "\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		qs, err := Compile(text, nil)
		runtime.ReadMemStats(&m1)
		if got, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(4<<20+64<<10*len(text)); got > limit {
			t.Errorf("%d input bytes allocated %d bytes; want at most %d", len(text), got, limit)
		}
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Line < 1 || e.Col < 1 {
				t.Fatalf("Compile(%q): %T %v has no position", text, err, err)
			}
			if lines := strings.Count(text, "\n") + 1; e.Line > lines {
				t.Fatalf("Compile(%q): line %d of %d", text, e.Line, lines)
			}
			return
		}
		defined := Streams{}
		for _, q := range qs {
			if q.Kind == KindStream {
				defined[q.Name] = q
			}
		}
		for _, q := range qs {
			if q.Kind == KindStream {
				continue
			}
			text := q.Text
			if q.Explain {
				text = "EXPLAIN " + text
			}
			again, err := Compile(text, defined)
			if err != nil || len(again) != 1 || again[0].Text != q.Text {
				t.Fatalf("canonical %q does not compile to itself: %v", q.Text, err)
			}
		}
	})
}

// TestCompileLinear: doubling a query's size at most about doubles what
// compiling it allocates, whatever grows (a long AND chain, an IN list,
// nesting, a string, comments).
func TestCompileLinear(t *testing.T) {
	shapes := map[string]func(n int) string{
		"and": func(n int) string {
			return "SELECT * FROM calls WHERE " + strings.Repeat("duration > 1ms AND ", n) + "error"
		},
		"in": func(n int) string { return "SELECT * FROM calls WHERE line IN (" + strings.Repeat("1, ", n) + "2)" },
		"nesting": func(n int) string {
			return "SELECT * FROM calls WHERE " + strings.Repeat("(", n%60) + "error" + strings.Repeat(")", n%60) + strings.Repeat(" OR error", n)
		},
		"string": func(n int) string { return "SELECT * FROM calls WHERE name = '" + strings.Repeat("x''", n) + "'" },
		"items": func(n int) string {
			return "SELECT " + strings.Repeat("duration + 1ms, ", n%200) + "duration FROM calls" + strings.Repeat(" -- c\n", n)
		},
	}
	for name, shape := range shapes {
		small, large := allocs(shape(200)), allocs(shape(400))
		if ratio := float64(large) / float64(small); ratio > 2.6 {
			t.Errorf("%s: doubling the text multiplied allocation by %.2f (%d → %d bytes)", name, ratio, small, large)
		}
	}
}

func allocs(text string) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	Compile(text, nil)
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}
