package writer

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// falseMarkers is size bytes of fake chunk headers, each a sync marker, a
// payload length of n and a wrong checksum: every one is a candidate whose
// payload is in the file, so checking each directly costs n bytes.
func falseMarkers(size, n int) []byte {
	var b []byte
	for len(b)+chunkHeaderLen <= size {
		b = append(b, syncMarker[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		b = binary.LittleEndian.AppendUint32(b, 0)
	}
	return b
}

// countRead reads data to its end and returns the items and the reader's work:
// bytes checksummed, searched for markers and moved in its buffer.
func countRead(data []byte) (read, int64) {
	r := NewReader(bytes.NewReader(data))
	got := readAll(r)
	return got, r.work
}

// maxWorkPerByte bounds Reader.work per input byte: a clean file is searched,
// checksummed and moved about once, a damaged one a few times more.
const maxWorkPerByte = 8

// TestRecoveryLinear: a stretch of false sync markers whose lengths point far
// ahead made recovery check each one over its whole length (256 KiB of them
// pointing 128 KiB ahead: 2.8 GB of checksumming), search the rest of the buffer
// for a file magic at each, and move the buffer at each. The reader must touch
// each byte a bounded number of times and still find every valid chunk after.
func TestRecoveryLinear(t *testing.T) {
	data, recs, ends := smallFile(t, 300)
	for _, tc := range []struct{ size, n int }{
		{256 << 10, 128 << 10},
		{1 << 20, maxChunkLen - 100},
		{64 << 10, maxChunkLen}, // lengths past the end: short chunks, no checksum
	} {
		var file []byte
		file = append(file, data[:ends[0]]...) // magic and the first chunk
		file = append(file, falseMarkers(tc.size, tc.n)...)
		file = append(file, data[ends[0]:]...)
		file = append(file, make([]byte, tc.n)...) // room for every false payload
		got, work := countRead(file)
		t.Logf("%d bytes of false markers with length %d: %d-byte file, work %d bytes (%.2f per byte)",
			tc.size, tc.n, len(file), work, float64(work)/float64(len(file)))
		if work > maxWorkPerByte*int64(len(file)) {
			t.Errorf("work of %d bytes for a %d-byte file; want at most %d per byte", work, len(file), maxWorkPerByte)
		}
		if got.err != nil || len(got.records) != len(recs) {
			t.Errorf("err %v, %d of %d records", got.err, len(got.records), len(recs))
		}
	}
}

// TestRecoveryQuietEnds: after damage the reader returns to direct checks once
// recoverQuiet bytes have been read clean; damage after that starts recovery
// again.
func TestRecoveryQuietEnds(t *testing.T) {
	data, recs, ends := smallFile(t, 300)
	bad := append([]byte{}, data...)
	bad[ends[0]+20] ^= 0xFF // in the second chunk
	var stream []byte
	copies := 0
	for stream = append(stream, bad...); len(stream) < recoverQuiet+len(data); copies++ {
		stream = append(stream, data...) // files concatenated are one stream
	}
	r := NewReader(bytes.NewReader(stream))
	got := readAll(r)
	if got.err != nil || len(got.gaps) != 1 {
		t.Fatalf("err %v, gaps %v; want the one damaged chunk", got.err, got.gaps)
	}
	if r.idx.on {
		t.Errorf("recovery still on after %d clean bytes; it ends after %d", len(stream)-len(bad), recoverQuiet)
	}
	if want := (copies+1)*len(recs) - (len(recs) - len(readBytes(bad).records)); len(got.records) != want {
		t.Errorf("%d records; want %d", len(got.records), want)
	}
	if got.stats.BadChunks != 1 {
		t.Errorf("%d bad chunks; want 1", got.stats.BadChunks)
	}
}

// TestCRCIndexMatchesDirect checks the combined checksums against crc32 on
// random chunks, including after the index dropped its front.
func TestCRCIndexMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	var x crcIndex
	for off := 0; off+chunkHeaderLen < len(buf); off += 1 + rng.IntN(100) {
		n := rng.IntN(len(buf) - off - chunkHeaderLen + 1)
		binary.LittleEndian.PutUint32(buf[off+4:], uint32(n))
		want := crc32.Update(crc32.Update(0, castagnoli(), buf[off+4:off+8]), castagnoli(), buf[off+chunkHeaderLen:off+chunkHeaderLen+n])
		got, _ := x.chunkCRC(buf, off, int64(off), n)
		if got != want {
			t.Fatalf("chunk at %d, %d bytes: %08x; want %08x", off, n, got, want)
		}
	}
}
