package traceconv

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// writeBenchFile writes a trace of a million records: MooBench-shaped traces (a
// call recursing 10 levels deep) mixed with traces of a root calling 9 of 20
// other functions.
func writeBenchFile(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "bench.tgr")
	w, err := writer.NewSync(writer.Options{Path: path, Host: "h", PID: 1, Binary: "/bench"})
	if err != nil {
		b.Fatal(err)
	}
	for id := uint32(1); id <= 21; id++ {
		w.Define(writer.ProbeDef{ID: id, Signature: "example.com/bench.F" + strconv.Itoa(int(id)) + "(int) error", Package: "example.com/bench", Name: "F" + strconv.Itoa(int(id)), File: "bench.go", Line: int(id)})
	}
	t := writer.Monotonic()
	for trace := uint64(1); trace <= 100_000; trace++ {
		gid := trace%8 + 1
		if trace%2 == 0 { // recursion: records at exit, deepest first
			for d := 9; d >= 0; d-- {
				w.Write(&writer.Record{Probe: 21, EOI: uint32(d), ESS: uint32(d), Trace: trace, GID: gid, TIn: t + int64(15*d), TOut: t + 300 - int64(15*d)})
			}
			t += 400
			continue
		}
		for k := 1; k <= 9; k++ {
			p := uint32((int(trace)+k)%20 + 1)
			w.Write(&writer.Record{Probe: p, EOI: uint32(k), ESS: 1, Trace: trace, GID: gid, TIn: t + int64(100*k), TOut: t + int64(100*k+80)})
		}
		w.Write(&writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: trace, GID: gid, TIn: t, TOut: t + 1000})
		t += 1100
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

func benchConvert(b *testing.B, path string, run func(r *writer.Reader) (Report, error)) {
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	var records int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := writer.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := run(r)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		records += rep.Records
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkConvert(b *testing.B) {
	path := writeBenchFile(b)
	for _, f := range Formats {
		b.Run(f.Name, func(b *testing.B) {
			benchConvert(b, path, func(r *writer.Reader) (Report, error) { return f.Convert(io.Discard, r, Options{}) })
		})
	}
	b.Run("read-text", func(b *testing.B) {
		benchConvert(b, path, func(r *writer.Reader) (Report, error) { return WriteLines(io.Discard, r, false, Options{}) })
	})
	b.Run("stats", func(b *testing.B) {
		benchConvert(b, path, func(r *writer.Reader) (Report, error) {
			_, rep, err := Summarize(r, Options{})
			return rep, err
		})
	})
	b.Run("read-only", func(b *testing.B) {
		benchConvert(b, path, func(r *writer.Reader) (Report, error) {
			var sc scanner
			var rep Report
			sc.rep = &rep
			return rep, sc.run(r)
		})
	})
}
