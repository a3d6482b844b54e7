package live

import (
	"testing"
	"time"
)

// BenchmarkIdleTick is what a running query costs the program while nothing
// reaches it: one tick (drain the taps, advance the windows), ten a second.
func BenchmarkIdleTick(b *testing.B) {
	setup(b)
	reg := NewRegistry(Options{Tick: time.Hour}) // the benchmark ticks by hand
	p, err := reg.Post(`SELECT function, count(*), max(duration) FROM calls WHERE name = 'Find' AND duration > 5ms GROUP BY function WINDOW 1s`, true)
	if err != nil {
		b.Fatal(err)
	}
	q := p[0].Query
	l := &loop{q: q, cat: readCatalog(), opts: reg.Options()}
	if err := l.acquire(); err != nil {
		b.Fatal(err)
	}
	defer l.release()
	defer q.Cancel()
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now = now.Add(100 * time.Millisecond)
		l.step(now)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*10/1000, "µs-per-second")
}
