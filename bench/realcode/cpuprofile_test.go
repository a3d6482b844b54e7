package realcode

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/internal/costcheck"
)

// protoMsg encodes a protobuf message for the tests: fields appended in
// order.
type protoMsg []byte

func (m protoMsg) varint(num, v uint64) protoMsg {
	m = binary.AppendUvarint(m, num<<3)
	return binary.AppendUvarint(m, v)
}

func (m protoMsg) bytes(num uint64, b []byte) protoMsg {
	m = binary.AppendUvarint(m, num<<3|2)
	m = binary.AppendUvarint(m, uint64(len(b)))
	return append(m, b...)
}

func (m protoMsg) packed(num uint64, vs ...uint64) protoMsg {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return m.bytes(num, b)
}

// testFunc is a function of a synthetic profile.
type testFunc struct {
	name, file string
	line       uint64
}

// testSample is a sample of a synthetic profile: its CPU time and its
// stack, innermost first; a location is one function or, with several, a
// call with functions inlined into it (innermost first).
type testSample struct {
	nanos uint64
	stack [][]int // function indexes per location
}

// encodeProfile writes a profile.proto as runtime/pprof does (sample types
// samples/count and cpu/nanoseconds), with the locations of every sample
// packed or not alternately.
func encodeProfile(funcs []testFunc, samples []testSample) []byte {
	strs := []string{""}
	str := func(s string) uint64 {
		for i, x := range strs {
			if x == s {
				return uint64(i)
			}
		}
		strs = append(strs, s)
		return uint64(len(strs) - 1)
	}
	var p protoMsg
	p = p.bytes(1, protoMsg(nil).varint(1, str("samples")).varint(2, str("count")))
	p = p.bytes(1, protoMsg(nil).varint(1, str("cpu")).varint(2, str("nanoseconds")))
	locs := map[string]uint64{}
	var locMsgs []protoMsg
	for i, s := range samples {
		var ids []uint64
		for _, loc := range s.stack {
			key := ""
			for _, f := range loc {
				key += string(rune('A' + f))
			}
			id, ok := locs[key]
			if !ok {
				id = uint64(len(locs) + 1)
				locs[key] = id
				l := protoMsg(nil).varint(1, id).varint(3, 0x1000+id)
				for _, f := range loc {
					l = l.bytes(4, protoMsg(nil).varint(1, uint64(f+1)).varint(2, funcs[f].line+1))
				}
				locMsgs = append(locMsgs, l)
			}
			ids = append(ids, id)
		}
		sm := protoMsg(nil)
		if i%2 == 0 {
			sm = sm.packed(1, ids...).packed(2, 1, s.nanos)
		} else {
			for _, id := range ids {
				sm = sm.varint(1, id)
			}
			sm = sm.varint(2, 1).varint(2, s.nanos)
		}
		p = p.bytes(2, sm)
	}
	for _, l := range locMsgs {
		p = p.bytes(4, l)
	}
	for i, f := range funcs {
		p = p.bytes(5, protoMsg(nil).varint(1, uint64(i+1)).varint(2, str(f.name)).varint(3, str(f.name)).varint(4, str(f.file)).varint(5, f.line))
	}
	for _, s := range strs {
		p = p.bytes(6, []byte(s))
	}
	return p.varint(9, 10000000) // period: a scalar field not read
}

// testModule is a module at /m with the functions of sharesProfile.
var testModuleFuncs = []testFunc{
	{"m.Parse", "/m/parse.go", 10},       // 0 probed
	{"m.skipWS", "/m/parse.go", 40},      // 1 small
	{"m.isDigit", "/m/parse.go", 50},     // 2 inlined
	{"m.Parse.func1", "/m/parse.go", 20}, // 3 a closure: not in tigris match
	{"m.BenchmarkParse", "/m/parse_test.go", 5},
	{"runtime.memmove", "/go/src/runtime/memmove_amd64.s", 30},
	{"testing.(*B).run1", "/go/src/testing/benchmark.go", 200},
	{"m.helper", "/m/helper.go", 7}, // 7 unprobed: not selected
}

// testModuleMatch is tigris match --json -v for testModuleFuncs, run in /m.
const testModuleMatch = `[
  {"signature": "m.Parse()", "package": "m", "name": "Parse", "pos": "parse.go:10:6", "by": ["module"]},
  {"signature": "m.skipWS()", "package": "m", "name": "skipWS", "pos": "/m/parse.go:40:6", "skipped": "too small to be worth a probe (size 12)", "by": ["module"]},
  {"signature": "m.isDigit()", "package": "m", "name": "isDigit", "pos": "parse.go:50:6", "skipped": "the compiler inlines it; a probe would change inlining and escapes (monitor.inlinable: probe instruments it anyway)", "by": ["module"]},
  {"signature": "m.helper()", "package": "m", "name": "helper", "pos": "helper.go:7:6", "skipped": "//go:nosplit", "by": ["module"]}
]`

// sharesSamples: 1000 ns of CPU in all, 800 of them with a frame of the
// module.
var sharesSamples = []testSample{
	{100, [][]int{{0}, {4}, {6}}},           // Parse's own
	{200, [][]int{{2, 0}, {4}, {6}}},        // isDigit inlined into Parse
	{150, [][]int{{1}, {0}, {4}, {6}}},      // skipWS called by Parse
	{50, [][]int{{5}, {0}, {0}, {4}, {6}}},  // memmove under a recursive Parse
	{100, [][]int{{3}, {4}, {6}}},           // the closure called by the benchmark
	{100, [][]int{{7}, {1}, {4}, {6}}},      // helper under skipWS, no probed frame
	{100, [][]int{{1}, {3}, {0}, {4}, {6}}}, // skipWS under the closure under Parse
	{200, [][]int{{4}, {6}}},                // the benchmark's own: not the module
}

func TestShares(t *testing.T) {
	p, err := decodeCPUProfile(encodeProfile(testModuleFuncs, sharesSamples))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Samples) != len(sharesSamples) || len(p.Funcs) != len(testModuleFuncs) {
		t.Fatalf("%d samples of %d functions, want %d of %d", len(p.Samples), len(p.Funcs), len(sharesSamples), len(testModuleFuncs))
	}
	if f := p.Funcs[p.stack(p.Samples[1])[0]]; f != (profFunc{"m.isDigit", "/m/parse.go", 50}) {
		t.Errorf("the innermost frame of an inlined call is %+v, want isDigit", f)
	}
	m, err := newProbeMap("/m", []byte(testModuleMatch))
	if err != nil {
		t.Fatal(err)
	}
	var sums shareSums
	sums.add(p, m)
	got := sums.shares()
	// Module samples: all but the last, 800 ns. With a probed frame (Parse):
	// all of them but the closure's own and helper's, 600.
	// cum: Parse 100+200+150+50+100 = 600, isDigit 200, skipWS
	// 150+100+100 = 350, closure 200, helper 100: 1450 in all, 600 probed.
	// flat: Parse 100, isDigit 200, skipWS 250, closure 100, helper 100:
	// 750 in the module (memmove's 50 is the runtime's), 100 probed.
	want := Shares{Samples: 7, CPUSeconds: 800e-9, Inclusive: 600.0 / 1450, Exclusive: 100.0 / 750,
		Measured: 600.0 / 800, ExclusiveInlined: 200.0 / 750, ExclusiveSmall: 250.0 / 750}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if got.Samples != want.Samples || !near(got.CPUSeconds, want.CPUSeconds) || !near(got.Inclusive, want.Inclusive) ||
		!near(got.Exclusive, want.Exclusive) || !near(got.Measured, want.Measured) ||
		!near(got.ExclusiveInlined, want.ExclusiveInlined) || !near(got.ExclusiveSmall, want.ExclusiveSmall) {
		t.Errorf("shares\n%+v, want\n%+v", got, want)
	}
	// Own time without a probe: skipWS 250, isDigit 200, the closure and
	// helper 100 each, of 750. Time no probe measures: the closure's own
	// and helper's under skipWS, 100 each of 800, entering the module at
	// the closure and at skipWS.
	wantUnprobed := []FuncShare{{"m.skipWS", "small", 250.0 / 750}, {"m.isDigit", "inlined", 200.0 / 750},
		{"m.Parse.func1", "other", 100.0 / 750}, {"m.helper", "other", 100.0 / 750}}
	wantUnmeasured := []FuncShare{{"m.Parse.func1", "other", 100.0 / 800}, {"m.skipWS", "small", 100.0 / 800}}
	if !reflect.DeepEqual(got.Unprobed, wantUnprobed) || !reflect.DeepEqual(got.Unmeasured, wantUnmeasured) {
		t.Errorf("unprobed %v, want %v; unmeasured %v, want %v", got.Unprobed, wantUnprobed, got.Unmeasured, wantUnmeasured)
	}

	var none shareSums
	if s := none.shares(); !math.IsNaN(s.Inclusive) || !math.IsNaN(s.Exclusive) || !math.IsNaN(s.Measured) {
		t.Errorf("shares without samples = %+v, want NaN", s)
	}
	b, err := json.Marshal(none.shares())
	if err != nil || !strings.Contains(string(b), `"inclusive":null`) {
		t.Errorf("shares without samples in JSON: %s, %v", b, err)
	}
	var back Shares
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.Inclusive) {
		t.Errorf("shares without samples read back: %+v, %v", back, err)
	}
	if b, err = json.Marshal(got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, got) {
		t.Errorf("shares read back from %s: %+v, %v", b, back, err)
	}
}

// spinProfiled burns CPU until the deadline, for TestDecodeRealProfile.
func spinProfiled(until time.Time) (n uint64) {
	for time.Now().Before(until) {
		for i := range 10000 {
			n += uint64(i) * n >> 3
		}
	}
	return n
}

var spinSink uint64

// TestDecodeRealProfile decodes a CPU profile runtime/pprof wrote in this
// process (gzip-compressed, as go test -cpuprofile writes it): the function
// that burned the CPU is on the stacks, with this file and the line of its
// func keyword.
func TestDecodeRealProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("no CPU profile: %v", err)
	}
	spinSink = spinProfiled(time.Now().Add(500 * time.Millisecond))
	pprof.StopCPUProfile()
	name := t.TempDir() + "/cpu.pprof"
	if err := os.WriteFile(name, buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	p, err := readCPUProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("cpuprofile_test.go")
	if err != nil {
		t.Fatal(err)
	}
	line := int64(1 + bytes.Count(src[:bytes.Index(src, []byte("\nfunc spinProfiled("))+1], []byte("\n")))
	var samples int
	var nanos int64
	for _, s := range p.Samples {
		for _, fi := range p.stack(s) {
			if f := p.Funcs[fi]; strings.HasSuffix(f.Name, ".spinProfiled") {
				if !strings.HasSuffix(f.File, "/bench/realcode/cpuprofile_test.go") || f.StartLine != line {
					t.Errorf("spinProfiled at %s:%d, want cpuprofile_test.go:%d", f.File, f.StartLine, line)
				}
				samples++
				nanos += s.Nanos
				break
			}
		}
	}
	if samples == 0 {
		t.Fatalf("no sample of %d has spinProfiled on its stack", len(p.Samples))
	}
	if nanos < int64(samples)*int64(time.Millisecond) {
		t.Errorf("%d samples of spinProfiled hold %v of CPU: not the cpu value (10 ms a sample)", samples, time.Duration(nanos))
	}
}

func TestGunzipProfileLimit(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	if _, err := gunzipProfile(z.Bytes(), 1<<20-1); err == nil {
		t.Error("a profile larger than the limit was decompressed")
	}
	if out, err := gunzipProfile(z.Bytes(), 1<<20); err != nil || len(out) != 1<<20 {
		t.Errorf("a profile at the limit: %d bytes, %v", len(out), err)
	}
	if out, err := gunzipProfile([]byte("plain"), 1); err != nil || string(out) != "plain" {
		t.Errorf("an uncompressed profile: %q, %v", out, err)
	}
}

func TestDecodeCPUProfileErrors(t *testing.T) {
	good := encodeProfile(testModuleFuncs, sharesSamples)
	for name, data := range map[string][]byte{
		"truncated":           good[:len(good)-3],
		"group wire type":     binary.AppendUvarint(nil, 2<<3|3),
		"missing location":    protoMsg(nil).bytes(2, protoMsg(nil).varint(1, 7)),
		"missing function":    protoMsg(nil).bytes(4, protoMsg(nil).varint(1, 1).bytes(4, protoMsg(nil).varint(1, 9))),
		"string out of range": protoMsg(nil).bytes(5, protoMsg(nil).varint(1, 1).varint(2, 5)),
	} {
		if _, err := decodeCPUProfile(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// profileBound is what decoding one profile and counting its shares may
// cost: the decoded functions, locations and samples, a string per string
// table entry, and stacks of up to framesPerByte frames a byte.
var profileBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 64 << 10, Allocs: 128},
	PerByte: costcheck.Cost{Bytes: 1024, Allocs: 2},
}

// manySamples is a profile of n samples over a few dozen functions.
func manySamples(n int) []byte {
	funcs := slicesRepeat(testModuleFuncs, 3)
	var samples []testSample
	for i := range n {
		stack := [][]int{{i % len(funcs), (i + 1) % len(funcs)}}
		for d := range 1 + i%20 {
			stack = append(stack, []int{(i*7 + d) % len(funcs)})
		}
		samples = append(samples, testSample{uint64(i), stack})
	}
	return encodeProfile(funcs, samples)
}

func slicesRepeat(fs []testFunc, n int) []testFunc {
	var out []testFunc
	for i := range n {
		for _, f := range fs {
			f.line += uint64(1000 * i)
			out = append(out, f)
		}
	}
	return out
}

// checkProfile decodes data and, when it decodes, counts its shares: every
// stack entry must name a function of the profile.
func checkProfile(t *testing.T, data []byte, m *probeMap) {
	p, err := decodeCPUProfile(data)
	if err != nil {
		return
	}
	for _, s := range p.Samples {
		for _, fi := range p.stack(s) {
			if fi < 0 || int(fi) >= len(p.Funcs) {
				t.Fatalf("a stack names function %d of %d", fi, len(p.Funcs))
			}
		}
	}
	var sums shareSums
	sums.add(p, m)
	sh := sums.shares()
	for _, x := range []float64{sh.Inclusive, sh.Exclusive, sh.Measured} {
		if x < 0 || x > 1 {
			t.Fatalf("a share of %v: %+v", x, sh)
		}
	}
}

// TestDecodeCostLinear: decoding and counting a profile costs allocation
// linear in its size.
func TestDecodeCostLinear(t *testing.T) {
	m, err := newProbeMap("/m", []byte(testModuleMatch))
	if err != nil {
		t.Fatal(err)
	}
	costcheck.Linear(t, manySamples, func(data []byte) { checkProfile(t, data, m) }, 200, 8)
}

// FuzzDecodeCPUProfile feeds arbitrary bytes (seeded with synthetic
// profiles, whole and damaged) to the decoder and the shares: neither may
// panic, a decoded profile's stacks name its functions, shares stay within
// [0, 1], and the cost stays within profileBound.
func FuzzDecodeCPUProfile(f *testing.F) {
	good := encodeProfile(testModuleFuncs, sharesSamples)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(manySamples(30))
	f.Add([]byte{})
	f.Add([]byte("not a profile"))
	m, err := newProbeMap("/m", []byte(testModuleMatch))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		profileBound.Check(t, len(data), func() { checkProfile(t, data, m) })
	})
}
