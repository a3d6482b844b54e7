package engine

import (
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/query"
)

// A Runner counts the bytes it holds for a query: its join buffers (the
// tuples each side keeps, their values, the rings that order them and the
// index by key) and its group tables (each open window's groups: keys,
// representative tuples, aggregates, the values a percentile keeps). The
// count follows every allocation and release of those structures, so it is
// what they hold, not an estimate from rates (Stats.Memory, MemoryPeak);
// strings are counted at their length even where they share memory with the
// program's, so it errs high. What a tuple costs while it passes through a
// step (the live loop's batch, a row on its way out) is not held and not
// counted.

// Sizes of what the accounting counts.
var (
	valueBytes = int64(unsafe.Sizeof(query.Value{}))
	entryBytes = int64(unsafe.Sizeof(jentry{}))
	groupBytes = int64(unsafe.Sizeof(group{})) + int64(unsafe.Sizeof(groupSet{}))/8
	aggBytes   = int64(unsafe.Sizeof(aggState{}))
	quantBytes = int64(unsafe.Sizeof(quantiles{}))
)

// mapEntryBytes is what one entry of a map costs beside its key's and
// value's own bytes: the bucket's share, tophash and overflow, rounded up.
const mapEntryBytes = 48

// sketchEntryBytes is one bucket of a percentile sketch: int key, uint64
// count and the map's overhead.
const sketchEntryBytes = 16 + mapEntryBytes

// valsBytes is what a kept copy of vals holds.
func valsBytes(vals []query.Value) int64 {
	n := int64(cap(vals)) * valueBytes
	for i := range vals {
		n += int64(len(vals[i].S))
	}
	return n
}

// grow adds n (negative: frees) to the bytes the runner holds.
func (c *control) grow(n int64) {
	if c == nil {
		return
	}
	c.mem += n
	if c.mem > c.peak {
		c.peak = c.mem
	}
}

// bytes is what q holds.
func (q *quantiles) bytes() int64 {
	return quantBytes + 8*int64(cap(q.exact)) + sketchEntryBytes*int64(len(q.pos)+len(q.neg))
}
