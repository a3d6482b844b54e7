package writer

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run if a writer goroutine or flush timer outlives the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaked := leakedGoroutines(); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by writers:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

// leakedGoroutines returns the stacks of goroutines running writer code, waiting up
// to two seconds for them to finish.
func leakedGoroutines() string {
	deadline := time.Now().Add(2 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var bad []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "writer.(*Async).service") || strings.Contains(g, "writer.(*Async).tick") || strings.Contains(g, "writer.(*Sync).tick") {
				bad = append(bad, g)
			}
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			return strings.Join(bad, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkNoWriterGoroutines is leakedGoroutines for one test.
func checkNoWriterGoroutines(t *testing.T) {
	t.Helper()
	if leaked := leakedGoroutines(); leaked != "" {
		t.Fatalf("writer goroutines still running:\n%s", leaked)
	}
}

// testProbes returns n probe definitions.
func testProbes(n int) []ProbeDef {
	defs := make([]ProbeDef, n)
	for i := range defs {
		defs[i] = ProbeDef{
			ID:        uint32(i),
			Signature: fmt.Sprintf("func (*example.com/shop.Store).Find%d(int) (Owner, error)", i),
			Package:   "example.com/shop",
			Recv:      "Store",
			Name:      fmt.Sprintf("Find%d", i),
			File:      "store.go",
			Line:      10 + i,
		}
	}
	return defs
}

// genRecords returns n records shaped like real traces (depth-first calls with
// increasing times) over probes [0, probes), with some extreme values mixed in.
func genRecords(rng *rand.Rand, n, probes int) []Record {
	recs := make([]Record, 0, n)
	t := int64(1_000_000_000)
	trace := uint64(1)
	for len(recs) < n {
		depth := 1 + rng.IntN(12)
		gid := uint64(1 + rng.IntN(50))
		tin := t
		for d := 0; d < depth && len(recs) < n; d++ {
			r := Record{
				Probe: uint32(rng.IntN(probes)),
				EOI:   uint32(d),
				ESS:   uint32(d),
				Trace: trace,
				GID:   gid,
				TIn:   tin + int64(d)*int64(rng.IntN(100)),
				TOut:  tin + 1_000_000 - int64(d)*int64(rng.IntN(1000)),
			}
			switch rng.IntN(20) {
			case 0:
				r.Flags |= FlagError
			case 1:
				r.Flags |= FlagPanic
			case 2:
				r.Flags |= FlagSize
				r.Size = rng.Int64N(1<<40) - 1<<39
			}
			recs = append(recs, r)
		}
		trace++
		t += int64(rng.IntN(10_000))
	}
	return recs
}

// extremeRecords exercise every encoding edge.
func extremeRecords() []Record {
	return []Record{
		{},
		{Probe: math.MaxUint32, Flags: 0xFF &^ (FlagLink | FlagRemote), EOI: math.MaxUint32, ESS: math.MaxUint32, Trace: math.MaxUint64, GID: math.MaxUint64, TIn: math.MaxInt64, TOut: math.MinInt64, Size: math.MinInt64},
		{Probe: 1, Flags: FlagSize, Trace: 0, GID: 0, TIn: math.MinInt64, TOut: math.MaxInt64, Size: math.MaxInt64},
		{Probe: 1, Flags: FlagSize, Size: -1, TIn: -5, TOut: -10},
		{Probe: 0, Flags: 0x20 | FlagError, Trace: 1 << 63, GID: 1},
		{Probe: 7, Flags: FlagPanic, EOI: 200, ESS: 3, Trace: 1 << 63, GID: 1, TIn: 1, TOut: 1},
		{Probe: 7, Flags: 0x08, Trace: 5, GID: 1 << 40, TIn: 1 << 62, TOut: 1<<62 + 5},
	}
}

// read is everything a Reader returned.
type read struct {
	headers []Header
	probes  []ProbeDef
	records []Record
	losses  []Loss
	gaps    []Gap
	links   []Link
	remotes []Remote
	stats   ReadStats
	err     error
}

func readAll(r *Reader) read {
	var out read
	for {
		it, err := r.Next()
		if err != nil {
			if err != io.EOF {
				out.err = err
			}
			break
		}
		switch it.Kind {
		case KindHeader:
			out.headers = append(out.headers, *it.Header)
		case KindProbe:
			out.probes = append(out.probes, *it.Probe)
		case KindRecord:
			out.records = append(out.records, it.Record)
		case KindLoss:
			out.losses = append(out.losses, it.Loss)
		case KindGap:
			out.gaps = append(out.gaps, it.Gap)
		case KindLink:
			out.links = append(out.links, it.Link)
		case KindRemote:
			out.remotes = append(out.remotes, it.Remote)
		}
	}
	out.stats = r.Stats()
	return out
}

func readBytes(b []byte) read { return readAll(NewReader(bytes.NewReader(b))) }

func readFile(t *testing.T, path string) read {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return readAll(r)
}

func (rd read) lost() uint64 {
	var n uint64
	for _, l := range rd.losses {
		n += l.Count
	}
	return n
}

func compareRecords(a, b Record) int {
	if c := cmpU64(a.Trace, b.Trace); c != 0 {
		return c
	}
	if c := cmpU64(uint64(a.EOI), uint64(b.EOI)); c != 0 {
		return c
	}
	if c := cmpU64(uint64(a.Probe), uint64(b.Probe)); c != 0 {
		return c
	}
	if c := cmpU64(uint64(a.TIn), uint64(b.TIn)); c != 0 {
		return c
	}
	return cmpU64(a.GID, b.GID)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sameRecords reports whether a and b hold the same records in any order.
func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	g, w := slices.Clone(got), slices.Clone(want)
	slices.SortFunc(g, compareRecords)
	slices.SortFunc(w, compareRecords)
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("record %d (sorted): got %+v, want %+v", i, g[i], w[i])
		}
	}
}

// testOptions returns options for a file in a fresh temporary directory.
func testOptions(t *testing.T) Options {
	return Options{
		Path:   t.TempDir() + "/out/app.tgr",
		Host:   "testhost",
		PID:    4242,
		Binary: "/usr/bin/app",
		Clock:  ClockBase{Wall: 1_700_000_000_000_000_000, Mono: 1_000_000_000},
	}
}

type constructor func(Options) (Output, error)

var writers = []struct {
	name string
	new  constructor
}{
	{"async", func(o Options) (Output, error) { return NewAsync(o) }},
	{"sync", func(o Options) (Output, error) { return NewSync(o) }},
}
