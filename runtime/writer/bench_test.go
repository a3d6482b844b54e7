package writer

import (
	"github.com/tigrisgo/tigris/runtime/internal/num"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// moobench generates the records of a MooBench stress run (recursion depth 10,
// methodTime 0): records come at exit, deepest first, ~15 ns apart per level.
type moobench struct {
	trace uint64
	d     int
}

func (m *moobench) next(r *Record) {
	if m.d == 0 {
		m.d = 10
		m.trace++
	}
	m.d--
	base := int64(1_000_000_000) + int64(m.trace)*500
	*r = Record{Probe: 1, EOI: uint32(m.d), ESS: uint32(m.d), Trace: m.trace, GID: 1,
		TIn: base + int64(m.d)*15, TOut: base + 300 - int64(m.d)*15}
}

// benchOutput writes b.N MooBench records from the benchmark's producers and reports
// producer-side ns/op, sustained records/s (up to Close: every record on disk),
// bytes per record and the share dropped.
func benchOutput(b *testing.B, parallel bool, mk func(Options) (Output, error), policy OnFull) {
	dir := b.TempDir()
	opt := Options{Path: dir + "/bench.tgr", OnFull: policy}
	w, err := mk(opt)
	if err != nil {
		b.Fatal(err)
	}
	w.Define(ProbeDef{ID: 1, Name: "monitoredMethod"})
	b.ReportAllocs()
	start := time.Now()
	b.ResetTimer()
	if parallel {
		var next atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			var r Record
			m := moobench{trace: next.Add(1<<40) - 1<<40} // disjoint trace ranges per goroutine
			for pb.Next() {
				m.next(&r)
				w.Write(&r)
			}
		})
	} else {
		var r Record
		var m moobench
		for i := 0; i < b.N; i++ {
			m.next(&r)
			w.Write(&r)
		}
	}
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	st := w.Stats()
	if st.Written+st.Dropped != uint64(b.N) {
		b.Fatalf("written %d + dropped %d != %d", st.Written, st.Dropped, b.N)
	}
	b.ReportMetric(float64(st.Written)/elapsed.Seconds(), "rec/s")
	if st.Written > 0 {
		b.ReportMetric(float64(st.Bytes)/float64(st.Written), "B/rec")
	}
	b.ReportMetric(100*float64(st.Dropped)/float64(b.N), "%dropped")
	os.RemoveAll(dir)
}

func newAsync(o Options) (Output, error) { return NewAsync(o) }
func newSync(o Options) (Output, error)  { return NewSync(o) }
func newNull(Options) (Output, error)    { return new(Null), nil }

func BenchmarkWrite(b *testing.B) {
	b.Run("async-drop", func(b *testing.B) { benchOutput(b, false, newAsync, Drop) })
	b.Run("async-block", func(b *testing.B) { benchOutput(b, false, newAsync, Block) })
	b.Run("sync", func(b *testing.B) { benchOutput(b, false, newSync, Drop) })
	b.Run("null", func(b *testing.B) { benchOutput(b, false, newNull, Drop) })
}

func BenchmarkWriteParallel(b *testing.B) {
	b.Run("async-drop", func(b *testing.B) { benchOutput(b, true, newAsync, Drop) })
	b.Run("async-block", func(b *testing.B) { benchOutput(b, true, newAsync, Block) })
	b.Run("sync", func(b *testing.B) { benchOutput(b, true, newSync, Drop) })
	b.Run("null", func(b *testing.B) { benchOutput(b, true, newNull, Drop) })
}

// BenchmarkEncodeToFile is the writer goroutine's work alone, on one core: encode
// records into chunks, checksum them and write them to a file.
func BenchmarkEncodeToFile(b *testing.B) {
	opt := Options{Path: b.TempDir() + "/enc.tgr"}
	opt = opt.withDefaults()
	out, err := newFileOut(&opt)
	if err != nil {
		b.Fatal(err)
	}
	out.define(ProbeDef{ID: 1})
	recs := make([]Record, 1<<16) // pre-generated: the writer's cost alone
	var m moobench
	for i := range recs {
		m.next(&recs[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += drainBatch {
		lo := i % len(recs)
		out.records(recs[lo : lo+num.Min(drainBatch, b.N-i)])
	}
	if err := out.close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rec/s")
	b.ReportMetric(float64(out.c.bytes.Load())/float64(b.N), "B/rec")
}

// BenchmarkRead decodes a file of MooBench records.
func BenchmarkRead(b *testing.B) {
	opt := Options{Path: b.TempDir() + "/read.tgr"}
	w, err := NewSync(opt)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 20
	var r Record
	var m moobench
	for i := 0; i < n; i++ {
		m.next(&r)
		w.Write(&r)
	}
	w.Close()
	data, err := os.ReadFile(opt.Path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd := NewReader(&sliceReader{b: data})
		for {
			if _, err := rd.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rec/s")
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

var sinkTime int64

// BenchmarkClockPair is the reference the performance targets are stated in: two
// reads of the monotonic clock the monitor stamps records with.
func BenchmarkClockPair(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sinkTime += nanotime() - nanotime()
	}
}
