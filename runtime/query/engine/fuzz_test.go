package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tigrisgo/tigris/runtime/query"
)

// FuzzRun plans every query that compiles against the shop catalog and runs
// it over a fixed mix of calls and samples: no plan or run may panic, and the
// rows have the schema's width.
func FuzzRun(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "paper", "*.sql"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(string(b))
	}
	f.Add("SELECT name, count(*), sum(duration), avg(line), min(start), max(function), p99(duration), percentile(goroutine, 0.5) FROM calls GROUP BY name, error WINDOW 1s SLIDE 500ms HAVING count(*) > 0")
	f.Add("SELECT a.duration - b.duration, a.time - b.start, a.line / 0, -a.duration FROM calls a WINDOW JOIN calls b WINDOW 2s b FOLLOWED BY a WHERE a.name LIKE '%i%_' OR b.function MATCHES 'execution(* *(..))'")
	f.Add("SELECT trace, depth FROM calls WHERE trace > 0 LIMIT 2")
	f.Fuzz(func(t *testing.T, text string) {
		qs, err := query.Compile(text, nil)
		if err != nil {
			return
		}
		q := qs[len(qs)-1]
		if q.Kind == query.KindStream {
			return
		}
		p, err := New(q, shop, Limits{MaxProbes: 2, Budget: 0.01})
		if err != nil {
			return
		}
		p.Explain()
		r := NewRunner(p, func(row Row) {
			if len(row.Vals) != len(q.Schema) {
				t.Fatalf("row of %d values for %d columns", len(row.Vals), len(q.Schema))
			}
		})
		for i := 0; i < 50; i++ {
			for li, l := range p.Leaves {
				if l.Every > 0 {
					vals := []query.Value{query.TimeValue(at + ms(float64(i*100)))}
					for range l.Stream.Columns[1:] {
						vals = append(vals, query.FloatValue(float64(i)/50))
					}
					r.Push(li, &Tuple{Time: vals[0].I, Vals: vals})
					continue
				}
				for _, n := range l.Probes {
					r.Push(li, callAt(n.Probe, float64(i*100), float64(i%7), CallFlags(i%4)))
				}
			}
			if i%10 == 0 {
				r.Advance(at + ms(float64(i*100-1000)))
				r.Running(at)
			}
		}
		r.Finish(at)
	})
}
