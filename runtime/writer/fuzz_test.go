package writer

import (
	"bytes"
	"io"
	"testing"
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
	return data
}

// FuzzReader: any input is read to the end without panicking or looping, and every
// item consumes input.
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
	f.Add([]byte{0xFF, 0xFF, 0xFF})
	f.Fuzz(func(t *testing.T, payload []byte) {
		if len(payload) > maxChunkLen {
			return
		}
		in := append(append([]byte{}, fileMagic[:]...), chunkOf(payload)...)
		checkReads(t, in)
	})
}

func checkReads(t *testing.T, data []byte) {
	r := NewReader(bytes.NewReader(data))
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
