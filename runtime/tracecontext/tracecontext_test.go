package tracecontext

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

const example = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestParse: the specification's example and the receiver's rules, each
// invalid form ignored.
func TestParse(t *testing.T) {
	p, ok := Parse(example)
	want := Parent{
		TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		Flags:   1,
	}
	if !ok || p != want || !p.Sampled() {
		t.Fatalf("Parse(%q) = %+v, %v; want %+v", example, p, ok, want)
	}
	if got := p.String(); got != example {
		t.Fatalf("String() = %q, want %q", got, example)
	}
	if got := FormatTraceID(p.TraceID); got != example[3:35] {
		t.Fatalf("FormatTraceID(%x) = %q, want %q", p.TraceID, got, example[3:35])
	}
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09", true},                 // a later version
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future", true}, // with more fields
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},               // not after a dash
		{example + "-extra", false},                                        // version 00 is 55 bytes
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false}, // version ff
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false}, // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false}, // zero span id
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false}, // upper case
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", false},
		{"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{" " + example[:54], false},
		{"", false},
	} {
		p, ok := Parse(c.in)
		if ok != c.ok {
			t.Errorf("Parse(%q) ok = %v, want %v", c.in, ok, c.ok)
		}
		if !ok && p != (Parent{}) {
			t.Errorf("Parse(%q) = %+v with ok false", c.in, p)
		}
	}
	if p, _ := Parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"); p.Sampled() {
		t.Error("flags 00 read as sampled")
	}
}

// TestParseAllocates: parsing allocates nothing, valid or not.
func TestParseAllocates(t *testing.T) {
	for _, s := range []string{example, "garbage", strings.Repeat("0", 60)} {
		if n := testing.AllocsPerRun(100, func() { Parse(s) }); n != 0 {
			t.Errorf("Parse(%q): got %v alloc(s); want 0", s, n)
		}
	}
}

// parseBound is what one parse may cost while the fuzzing engine runs:
// nothing per byte, and a fixed allowance for the engine's own goroutines
// (costcheck counts the process's allocations; TestParseAllocates checks
// that Parse itself allocates nothing).
var parseBound = costcheck.Bound{Fixed: costcheck.Cost{Bytes: 16 << 10, Allocs: 64}}

// FuzzParse: any input parses or is ignored without allocating; what parses
// is valid, formats back to the same ids and flags, and depends on the
// first 56 bytes only, so the work of a parse is bounded whatever the
// input's length.
func FuzzParse(f *testing.F) {
	for _, s := range []string{example, "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "", "ff-", strings.Repeat("-", 56)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p Parent
		var ok bool
		parseBound.Check(t, len(s), func() { p, ok = Parse(s) })
		if q, ok2 := parseReference(s); q != p || ok2 != ok {
			t.Fatalf("Parse(%q) = %+v %v; the reference says %+v %v", s, p, ok, q, ok2)
		}
		if len(s) > headerLen+1 {
			// The rest of the input changes nothing but a version 00
			// header's length, which is invalid past 55 bytes either way.
			q, ok2 := Parse(s[:headerLen+1] + "x")
			if q != p || ok2 != ok {
				t.Fatalf("Parse(%q) = %+v %v, but with other bytes after 56: %+v %v", s, p, ok, q, ok2)
			}
		}
		if !ok {
			return
		}
		if !p.Valid() {
			t.Fatalf("Parse(%q) = %+v: zero id", s, p)
		}
		back := p.String()
		if back[2:] != s[2:headerLen] {
			t.Fatalf("Parse(%q).String() = %q", s, back)
		}
		if q, ok := Parse(back); !ok || q != p {
			t.Fatalf("Parse(%q) = %+v %v; parsed from %q as %+v", back, q, ok, s, p)
		}
	})
}

// parseReference is Parse written plainly, field by field, for FuzzParse to
// compare with.
func parseReference(s string) (Parent, bool) {
	if len(s) > headerLen && (s[headerLen] != '-' || strings.HasPrefix(s, "00")) {
		return Parent{}, false // version 00 is 55 bytes, a later one has a dash after them
	}
	if len(s) > headerLen {
		s = s[:headerLen]
	} else if len(s) < headerLen {
		return Parent{}, false
	}
	f := strings.Split(s, "-")
	if len(f) != 4 || len(f[0]) != 2 || len(f[1]) != 32 || len(f[2]) != 16 || len(f[3]) != 2 {
		return Parent{}, false
	}
	var p Parent
	var ver [1]byte
	for _, x := range []struct {
		dst []byte
		src string
	}{{ver[:], f[0]}, {p.TraceID[:], f[1]}, {p.SpanID[:], f[2]}, {[]byte{0}, f[3]}} {
		if strings.ToLower(x.src) != x.src {
			return Parent{}, false
		}
		if _, err := hex.Decode(x.dst, []byte(x.src)); err != nil {
			return Parent{}, false
		}
	}
	flags, _ := hex.DecodeString(f[3])
	p.Flags = flags[0]
	if ver[0] == 0xff || !p.Valid() {
		return Parent{}, false
	}
	return p, true
}

// BenchmarkParse is the traceparent part of a trace root's lookup.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := Parse(example); !ok {
			b.Fatal("not parsed")
		}
	}
}
