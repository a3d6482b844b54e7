package traceconv

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// FuzzConvert feeds arbitrary bytes (seeded with real trace files, whole and
// damaged) to every converter: none may fail or panic on bad input, the JSON
// outputs must stay valid, the profile must parse, and the memory allocated
// must stay linear in the input (fuzzAllocPerByte).
// The allocation bound of one FuzzConvert input, all conversions together: a
// deep call path costs a pprof sample of up to 64 frames for about 11 bytes of
// input (about 400 bytes per byte); a quadratic cost exceeds it on inputs of a
// few kilobytes.
const (
	fuzzAllocFixed   = 8 << 20
	fuzzAllocPerByte = 2048
)

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
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		defer func() {
			runtime.ReadMemStats(&m1)
			if got, limit := m1.TotalAlloc-m0.TotalAlloc, fuzzAllocFixed+fuzzAllocPerByte*uint64(len(data)); got > limit {
				t.Errorf("%d input bytes allocated %d bytes; want at most %d", len(data), got, limit)
			}
		}()
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
				for l := range strings.Lines(out.String()) {
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
		for l := range strings.Lines(out.String()) {
			if !json.Valid([]byte(l)) {
				t.Fatalf("invalid JSON line %q", l)
			}
		}
		if _, _, err := Summarize(writer.NewReader(bytes.NewReader(data)), Options{}); err != nil {
			t.Fatal(err)
		}
	})
}
