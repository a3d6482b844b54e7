package traceconv

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// deepChain is one trace of a single call chain depth calls deep (a recursion),
// records in the order the monitor writes them: innermost first. The call at
// depth d is probe 1+d%period, so period = depth makes every level a distinct
// function and every path a distinct pprof sample.
func deepChain(depth, period int) []writer.Record {
	recs := make([]writer.Record, depth)
	for i := range recs {
		d := depth - 1 - i
		recs[i] = writer.Record{Probe: uint32(1 + d%period), EOI: uint32(d), ESS: uint32(d), Trace: 1, GID: 7,
			TIn: int64(d), TOut: int64(2*depth - d)}
	}
	return recs
}

// TestProfileDeepMemoryLinear converts a recursion tens of thousands of calls
// deep. Before Options.MaxFrames every level's sample held the whole path: a
// depth of 16,000 allocated 3.7 GB. Allocation must now stay within a constant
// per call level, the same at 5,000 and at 20,000 levels.
func TestProfileDeepMemoryLinear(t *testing.T) {
	const perLevel = 8 << 10 // bytes allocated per call level; about 4.3 kB measured
	var small float64
	for _, depth := range []int{5000, 20000} {
		path := writeStream(t, t.TempDir(), 1, testProbes, deepChain(depth, depth))
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		r := openTest(t, path)
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		rep, err := Pprof.Convert(io.Discard, r, Options{})
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		alloc := float64(m1.TotalAlloc - m0.TotalAlloc)
		per := alloc / float64(depth)
		t.Logf("depth %d (%d-byte file): %.1f MB allocated, %.0f bytes per level", depth, st.Size(), alloc/1e6, per)
		if per > perLevel {
			t.Fatalf("depth %d: %.0f bytes allocated per call level; want at most %d", depth, per, perLevel)
		}
		if small == 0 {
			small = per
		} else if per > 1.5*small {
			t.Errorf("bytes per level grew from %.0f to %.0f with the depth: not linear", small, per)
		}
		if want := int64(depth - 64); rep.Elided != want {
			t.Errorf("depth %d: %d paths elided; want %d", depth, rep.Elided, want)
		}
	}
}

// TestProfileElidesMiddleFrames checks the shape of a shortened sample: the
// outermost and innermost frames around one "(elided calls)" frame, the values
// of paths that look alike merged, and no time lost.
func TestProfileElidesMiddleFrames(t *testing.T) {
	const depth = 20
	path := writeStream(t, t.TempDir(), 1, testProbes, deepChain(depth, 3))
	var out bytes.Buffer
	rep, err := Pprof.Convert(&out, openTest(t, path), Options{MaxFrames: 8})
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var calls, excl int64
	deep := 0
	for _, s := range p.Sample {
		calls += s.Value[0]
		excl += s.Value[2]
		if len(s.Location) > 8 {
			t.Errorf("sample of %d frames; want at most 8", len(s.Location))
		}
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			names = append(names, shortName(s.Location[i].Line[0].Function.SystemName))
		}
		if len(s.Location) == 8 && names[4] == elidedName {
			deep++
			// Root first: Handle Find decode Handle | elided | 3 innermost.
			if got := strings.Join(names[:4], ";"); got != "Handle;Find;decode;Handle" {
				t.Errorf("outermost frames %s; want Handle;Find;decode;Handle", got)
			}
		}
	}
	// Depths 9 to 20 are elided; their innermost three frames repeat with
	// period 3, so they merge into 3 samples.
	if rep.Elided != depth-8 || deep != 3 {
		t.Errorf("%d paths elided in %d samples; want %d in 3", rep.Elided, deep, depth-8)
	}
	// Each level's exclusive time is 2 ns (its own entry and exit), the
	// innermost's 2: every call and every nanosecond is in some sample.
	if calls != depth || excl != 2*depth {
		t.Errorf("samples hold %d calls, %d ns exclusive; want %d, %d", calls, excl, depth, 2*depth)
	}
	if w := fmt.Sprint(rep.Warnings()); !strings.Contains(w, "12 call paths are deeper than the profile's frame limit") {
		t.Errorf("warnings %s; want the elided paths", w)
	}
}

// TestDeepChainNeedsNoStack: a trace file can hold one call chain millions
// deep (a crafted one: no program's stack is that deep). The OPEN.xtrace
// writer and the profile builder walked it recursively, about 256 bytes of
// goroutine stack a level: 4 million levels (a file of some 45 MB) went past
// Go's limit of 1 GB, which ends the program. Every conversion now walks
// with stacks of its own; here with a goroutine stack limit of 16 MB and a
// chain of 200,000 levels, which recursion would need 50 MB for.
func TestDeepChainNeedsNoStack(t *testing.T) {
	path := writeStream(t, t.TempDir(), 1, testProbes, deepChain(200_000, 3))
	old := debug.SetMaxStack(16 << 20)
	defer debug.SetMaxStack(old)
	for _, fm := range Formats {
		if _, err := fm.Convert(io.Discard, openTest(t, path), Options{}); err != nil {
			t.Fatalf("%s: %v", fm.Name, err)
		}
	}
	if _, err := WriteLines(io.Discard, openTest(t, path), true, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Summarize(openTest(t, path), Options{}); err != nil {
		t.Fatal(err)
	}
}
