package traceconv

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/internal/costcheck"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// convertBound is what one FuzzConvert input may cost, all conversions
// together: a deep call path costs a pprof sample of up to 64 frames for
// about 11 bytes of input (about 400 bytes per byte); a quadratic cost
// exceeds it on inputs of a few kilobytes.
var convertBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 8 << 20, Allocs: 16 << 10},
	PerByte: costcheck.Cost{Bytes: 2048, Allocs: 32},
}

// FuzzConvert feeds arbitrary bytes (seeded with real trace files, whole and
// damaged) to every converter: none may fail or panic on bad input, the JSON
// outputs must stay valid, the profile must parse, and the cost must stay
// within convertBound, linear in the input.
func FuzzConvert(f *testing.F) {
	path := testFile(f)
	appendLoss(f, path, 3, 10, 20)
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(append(data[:40:40], data...))
	f.Add([]byte("not a trace"))
	deep := writeStream(f, f.TempDir(), 1, testProbes, deepChain(70, 70))
	if data, err = os.ReadFile(deep); err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	if data, err = os.ReadFile(linkedFile(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		convertBound.Check(t, len(data), func() { checkConvert(t, data) })
	})
}

// TestConvertCostLinear: converting many traces (every format, the lines and
// the summary) costs allocation linear in the file.
func TestConvertCostLinear(t *testing.T) {
	gen := func(n int) []byte {
		var recs []writer.Record
		for tr := uint64(1); tr <= uint64(n); tr++ {
			for _, r := range deepChain(5, 3) {
				r.Trace, r.TIn, r.TOut = tr, r.TIn+int64(tr)*100, r.TOut+int64(tr)*100
				recs = append(recs, r)
			}
		}
		data, err := os.ReadFile(writeStream(t, t.TempDir(), 1, testProbes, recs))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	costcheck.Linear(t, gen, func(data []byte) { checkConvert(t, data) }, 200, 8)
}

func checkConvert(t *testing.T, data []byte) {
	for _, fm := range Formats {
		var out bytes.Buffer
		if _, err := fm.Convert(&out, writer.NewReader(bytes.NewReader(data)), Options{Lag: 2, MaxPending: 8}); err != nil {
			t.Fatalf("%s: %v", fm.Name, err)
		}
		switch fm {
		case OpenXTrace, Chrome:
			if !json.Valid(out.Bytes()) {
				t.Fatalf("%s: invalid JSON:\n%s", fm.Name, out.Bytes())
			}
		case Pprof:
			if _, err := profile.ParseData(out.Bytes()); err != nil {
				t.Fatalf("pprof: %v", err)
			}
		case Kieker:
			for _, l := range strings.SplitAfter(out.String(), "\n") { // strings.Lines needs go1.24
				if l == "" {
					continue // after the last line break
				}
				if n := strings.Count(l, ";"); n != 9 {
					t.Fatalf("kieker: %d fields in %q", n+1, l)
				}
			}
		}
	}
	var out bytes.Buffer
	if _, err := WriteLines(&out, writer.NewReader(bytes.NewReader(data)), true, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.SplitAfter(out.String(), "\n") { // strings.Lines needs go1.24
		if l == "" {
			continue // after the last line break
		}
		if !json.Valid([]byte(l)) {
			t.Fatalf("invalid JSON line %q", l)
		}
	}
	if _, _, err := Summarize(writer.NewReader(bytes.NewReader(data)), Options{}); err != nil {
		t.Fatal(err)
	}
}
