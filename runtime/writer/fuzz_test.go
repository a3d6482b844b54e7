package writer

import (
	"bytes"
	"io"
	"testing"

	"github.com/tigrisgo/tigris/runtime/internal/costcheck"
)

func addSeeds(f *testing.F) []byte {
	data, _, ends := smallFile(f, 40)
	f.Add(data)
	f.Add(data[:ends[1]+5])
	f.Add(append(append([]byte{}, data...), data...))
	bad := append([]byte{}, data...)
	bad[ends[0]+20] ^= 0xFF
	f.Add(bad)
	f.Add([]byte{})
	f.Add(fileMagic[:])
	f.Add(syncMarker[:])
	f.Add(append(append(append([]byte{}, data[:ends[0]]...), falseMarkers(1<<10, 1<<9)...), make([]byte, 1<<9)...))
	return data
}

// FuzzReader: any input is read to the end without panicking or looping, every
// item consumes input, and the work and memory stay linear in the input.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReads(t, data)
	})
}

// FuzzPayload frames arbitrary bytes as a chunk with a valid checksum, so the item
// decoder itself is exercised.
func FuzzPayload(f *testing.F) {
	data, _, ends := smallFile(f, 40)
	f.Add(data[len(fileMagic)+chunkHeaderLen : ends[0]])
	f.Add(data[ends[0]+chunkHeaderLen : ends[1]])
	f.Add([]byte{wireHeader, 0})
	f.Add([]byte{wireProbe, 1, 0})
	f.Add([]byte{wireLoss, 4, 1, 2, 3, 4})
	f.Add([]byte{wireLink, 8, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(append([]byte{wireRemote, 28, 1, 2}, make([]byte, 26)...))
	f.Add([]byte{0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > maxChunkLen {
			return
		}
		in := append(append([]byte{}, fileMagic[:]...), chunkOf(payload)...)
		checkReads(t, in)
	})
}

// checkReads reads data to its end and checks progress and cost: the reader's
// work (bytes checksummed, searched and moved) at most maxWorkPerByte per input
// byte, and its allocation a constant (a buffer for the largest chunk, the
// recovery index) plus a bounded amount per byte.
func checkReads(t *testing.T, data []byte) {
	r := NewReader(bytes.NewReader(data))
	readBound.Check(t, len(data), func() { readAllChecked(t, r, data) })
	if limit := maxWorkPerByte*int64(len(data)) + 1024; r.work > limit {
		t.Errorf("work of %d bytes for %d input bytes; want at most %d", r.work, len(data), limit)
	}
}

// readBound is what reading an input may allocate: a buffer for the largest
// chunk and the recovery index, and a bounded amount per byte (records, call
// trees).
var readBound = costcheck.Bound{
	Fixed:   costcheck.Cost{Bytes: 16 << 20, Allocs: 1 << 10},
	PerByte: costcheck.Cost{Bytes: 256, Allocs: 4},
}

// readAllChecked reads data to its end through r and checks progress.
func readAllChecked(t *testing.T, r *Reader, data []byte) {
	var b TraceBuilder
	limit := len(data) + 2
	for n := 0; ; n++ {
		if n > limit {
			t.Fatalf("%d items from %d bytes: the reader does not make progress", n, len(data))
		}
		it, err := r.Next()
		if err != nil {
			if err == io.EOF {
				break
			}
			if _, again := r.Next(); again != err {
				t.Fatalf("error not sticky: %v then %v", err, again)
			}
			return
		}
		switch it.Kind {
		case KindRecord:
			b.Add(&it.Record)
		case KindGap:
			if it.Gap.Bytes <= 0 {
				t.Fatalf("empty gap %+v", it.Gap)
			}
		case KindLink:
			b.AddLink(&it.Link)
		case KindRemote:
			b.AddRemote(&it.Remote)
		case KindHeader, KindProbe, KindLoss:
		default:
			t.Fatalf("item of kind %v", it.Kind)
		}
	}
	st := r.Stats()
	if st.SkippedBytes > int64(len(data)) {
		t.Fatalf("skipped %d of %d bytes", st.SkippedBytes, len(data))
	}
	b.Traces()
}
