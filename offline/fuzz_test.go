package offline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/internal/costcheck"
)

// snapshotBound is what decoding one statistics snapshot may cost: JSON
// decoding allocates in proportion to the text, each entry decoded twice.
var snapshotBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 64 << 10, Allocs: 512},
	PerByte: costcheck.Cost{Bytes: 512, Allocs: 8},
}

// FuzzDecodeSnapshot: any bytes decode to statistics or an error, without
// panicking, within snapshotBound.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add([]byte(`[{"id": 1, "signature": "a.F()", "count": 3, "meanNs": 10}]`))
	f.Add([]byte(`{"stats": [{"id": 0}, {"id": 0, "resultSizeMean": 2}]}`))
	f.Add([]byte(`{"stats": null}`))
	f.Add([]byte("\ufeff[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		snapshotBound.Check(t, len(data), func() { DecodeSnapshot(data) })
	})
}

// TestDecodeSnapshotCostLinear: a snapshot of many functions costs
// allocation linear in its size.
func TestDecodeSnapshotCostLinear(t *testing.T) {
	costcheck.Linear(t, func(n int) []byte {
		entries := make([]string, n)
		for i := range entries {
			entries[i] = fmt.Sprintf(`{"id": %d, "signature": "example.com/x.F%d(int) error", "count": %d, "meanNs": 100.5, "stdDevNs": 3}`, i+1, i, i)
		}
		return []byte(`{"stats": [` + strings.Join(entries, ",") + "]}")
	}, func(in []byte) {
		if _, err := DecodeSnapshot(in); err != nil {
			t.Fatal(err)
		}
	}, 100, 8)
}
