package costcheck

import (
	"bytes"
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Errorf(f string, a ...any) { r.failed = append(r.failed, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...) }

var sink [][]byte

// TestLinearTellsQuadratic: a cost that grows with the square of the input
// fails Linear and the bound; a linear one passes both.
func TestLinearTellsQuadratic(t *testing.T) {
	gen := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	linear := func(in []byte) {
		for i := range in {
			sink = append(sink[:0], make([]byte, 64+i%2))
		}
	}
	quadratic := func(in []byte) {
		for range in {
			sink = append(sink[:0], make([]byte, len(in)))
		}
	}
	for _, tc := range []struct {
		name string
		f    func([]byte)
		ok   bool
	}{{"linear", linear, true}, {"quadratic", quadratic, false}} {
		r := &recorder{TB: t}
		Linear(r, gen, tc.f, 1<<10, 8)
		b := Bound{Fixed: Cost{Bytes: 1 << 10, Allocs: 10}, PerByte: Cost{Bytes: 128, Allocs: 2}}
		in := gen(1 << 12)
		b.Check(r, len(in), func() { tc.f(in) })
		if ok := len(r.failed) == 0; ok != tc.ok {
			t.Errorf("%s: failures %q; want ok=%v", tc.name, r.failed, tc.ok)
		}
	}
}
