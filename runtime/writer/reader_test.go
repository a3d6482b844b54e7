package writer

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// smallFile writes a file of many small chunks with Sync (so the order is known)
// and returns its bytes, its records, and the end offset of every chunk.
func smallFile(t testing.TB, nrec int) (data []byte, recs []Record, ends []int) {
	opt := Options{
		Path:       t.TempDir() + "/small.tgr",
		ChunkBytes: 256,
		Host:       "h", PID: 1, Binary: "b",
		Clock: ClockBase{Wall: 1, Mono: 2},
	}
	w, err := NewSync(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range testProbes(5) {
		w.Define(d)
	}
	recs = genRecords(rand.New(rand.NewPCG(7, 8)), nrec, 5)
	for i := range recs {
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(opt.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range chunkSpans(t, data) {
		ends = append(ends, sp[1])
	}
	return data, recs, ends
}

func TestReadTornTail(t *testing.T) {
	data, recs, ends := smallFile(t, 300)
	if len(ends) < 10 {
		t.Fatalf("only %d chunks", len(ends))
	}
	// Records in the prefix ending at each chunk boundary.
	before := map[int]int{len(fileMagic): 0}
	for _, e := range ends {
		got := readBytes(data[:e])
		if got.err != nil || len(got.gaps) != 0 {
			t.Fatalf("clean prefix %d: err %v gaps %v", e, got.err, got.gaps)
		}
		before[e] = len(got.records)
	}
	if before[len(data)] != len(recs) {
		t.Fatalf("whole file: %d records, want %d", before[len(data)], len(recs))
	}
	for n := 0; n <= len(data); n++ {
		got := readBytes(data[:n])
		if got.err != nil {
			t.Fatalf("cut at %d: %v", n, got.err)
		}
		// The last complete chunk boundary at or before n.
		last := 0
		if n >= len(fileMagic) {
			last = len(fileMagic)
		}
		for _, e := range ends {
			if e <= n {
				last = e
			}
		}
		want := recs[:before[last]]
		if last == 0 {
			want = nil
		}
		if !slices.Equal(got.records, want) {
			t.Fatalf("cut at %d: %d records, want the %d of complete chunks", n, len(got.records), len(want))
		}
		switch {
		case n == last && len(got.gaps) != 0:
			t.Fatalf("cut at chunk boundary %d: gaps %+v", n, got.gaps)
		case n != last && (len(got.gaps) != 1 || !got.gaps[0].Torn || got.gaps[0].Bytes != int64(n-last) || got.gaps[0].Offset != int64(last)):
			t.Fatalf("cut at %d (boundary %d): gaps %+v", n, last, got.gaps)
		}
	}
}

// TestReadNotATrace: a source with nothing of a trace in it is one gap
// marked NotTrace, not a torn tail; a trace cut anywhere, even inside its
// magic, and a trace after foreign bytes are not that.
func TestReadNotATrace(t *testing.T) {
	data, _, ends := smallFile(t, 50)
	random := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for name, b := range map[string][]byte{
		"go.mod":       []byte("module example.com/x\n\ngo 1.26\n"),
		"random bytes": random,
		"one byte":     {'x'},
		"sync marker":  append(append([]byte(nil), syncMarker[:]...), 1, 2, 3),
	} {
		got := readBytes(b)
		if len(got.gaps) != 1 || !got.gaps[0].NotTrace || got.gaps[0].Torn || got.gaps[0].Bytes != int64(len(b)) {
			t.Errorf("%s: gaps %+v; want one NotTrace gap of %d bytes", name, got.gaps, len(b))
		}
	}
	if got := readBytes(nil); len(got.gaps) != 0 {
		t.Errorf("empty: gaps %+v", got.gaps)
	}
	for name, b := range map[string][]byte{
		"cut in the magic":         data[:len(fileMagic)-3],
		"cut after the magic":      data[:len(fileMagic)+5],
		"cut in the second chunk":  data[:ends[0]+7],
		"foreign bytes, then data": append([]byte("module x\n"), data[:ends[0]+7]...),
	} {
		got := readBytes(b)
		if len(got.gaps) == 0 || got.gaps[len(got.gaps)-1].NotTrace || !got.gaps[len(got.gaps)-1].Torn {
			t.Errorf("%s: gaps %+v; want a torn tail", name, got.gaps)
		}
	}
}

func TestReadCorruptChunk(t *testing.T) {
	data, recs, ends := smallFile(t, 300)
	// Records per chunk, from clean prefixes.
	var perChunk []int
	prev := 0
	for _, e := range ends {
		n := len(readBytes(data[:e]).records)
		perChunk = append(perChunk, n-prev)
		prev = n
	}
	starts := append([]int{len(fileMagic)}, ends[:len(ends)-1]...)
	rng := rand.New(rand.NewPCG(9, 10))
	for k := 1; k < len(ends); k++ { // chunk 0 holds the header
		for _, where := range []string{"sync", "length", "crc", "payload"} {
			bad := slices.Clone(data)
			var off int
			switch where {
			case "sync":
				off = starts[k] + rng.IntN(4)
			case "length":
				off = starts[k] + 4 + rng.IntN(4)
			case "crc":
				off = starts[k] + 8 + rng.IntN(4)
			case "payload":
				off = starts[k] + chunkHeaderLen + rng.IntN(ends[k]-starts[k]-chunkHeaderLen)
			}
			bad[off] ^= byte(1 + rng.IntN(255))
			got := readBytes(bad)
			if got.err != nil {
				t.Fatalf("chunk %d %s: %v", k, where, got.err)
			}
			want := len(recs) - perChunk[k]
			if len(got.records) != want {
				t.Fatalf("chunk %d %s: %d records, want %d", k, where, len(got.records), want)
			}
			if len(got.gaps) != 1 || got.gaps[0].Offset != int64(starts[k]) || got.gaps[0].Bytes != int64(ends[k]-starts[k]) {
				t.Fatalf("chunk %d %s: gaps %+v, want one at %d of %d bytes", k, where, got.gaps, starts[k], ends[k]-starts[k])
			}
			// A length pointing past the end of the last chunk looks like a torn tail.
			tornLike := where == "length" && k == len(ends)-1
			if where != "sync" && !tornLike && got.stats.BadChunks == 0 {
				t.Fatalf("chunk %d %s: no bad chunk counted", k, where)
			}
		}
	}
	// Garbage between chunks and at the start is skipped too.
	junk := append(append(slices.Clone(data[:ends[2]]), "garbage\xD9TG"...), data[ends[2]:]...)
	got := readBytes(append([]byte("junk"), junk...))
	if len(got.records) != len(recs) || len(got.gaps) != 2 || got.gaps[1].Bytes != 10 {
		t.Fatalf("junk: %d records, gaps %+v", len(got.records), got.gaps)
	}
}

func TestReadConcatenated(t *testing.T) {
	data, recs, _ := smallFile(t, 100)
	got := readBytes(append(slices.Clone(data), data...))
	if got.err != nil || len(got.gaps) != 0 || len(got.headers) != 2 {
		t.Fatalf("err %v gaps %v headers %d", got.err, got.gaps, len(got.headers))
	}
	if !slices.Equal(got.records, append(slices.Clone(recs), recs...)) {
		t.Fatal("records differ")
	}
	// A torn first file followed by a whole one: the tear is reported, the second
	// file read in full.
	got = readBytes(append(slices.Clone(data[:len(data)-5]), data...))
	if len(got.gaps) != 1 || len(got.headers) != 2 || len(got.records) < len(recs) {
		t.Fatalf("gaps %v headers %d records %d", got.gaps, len(got.headers), len(got.records))
	}
}

// chunkOf frames payload as a valid chunk.
func chunkOf(payload []byte) []byte {
	e := newEncoder(len(payload))
	e.buf = append(e.buf, payload...)
	return slices.Clone(e.seal())
}

func TestReadForwardCompatibility(t *testing.T) {
	var e encoder
	e = newEncoder(1024)
	h := Header{Major: FormatMajor, Minor: FormatMinor + 3, Stream: 5, Host: "h", Binary: "b"}
	e.header(&h)
	// A later minor version appended a header field: patch it in.
	hdr := slices.Clone(e.buf[chunkHeaderLen:])
	hdr = append(hdr, 0x7F, 0x7F)
	hdr[1] += 2
	payload := hdr
	payload = append(payload, 0x42, 3, 'a', 'b', 'c') // unknown item kind
	e.reset()
	r1 := Record{Probe: 1, EOI: 1, TIn: 10, TOut: 20}
	e.record(&r1)
	payload = append(payload, e.buf[chunkHeaderLen:]...)
	file := append(fileMagic[:], chunkOf(payload)...)
	got := readBytes(file)
	if got.err != nil || len(got.gaps) != 0 || got.stats.Unknown != 1 {
		t.Fatalf("err %v gaps %v unknown %d", got.err, got.gaps, got.stats.Unknown)
	}
	if len(got.headers) != 1 || got.headers[0].Minor != FormatMinor+3 || got.headers[0].Host != "h" {
		t.Fatalf("headers %+v", got.headers)
	}
	if len(got.records) != 1 || got.records[0] != r1 {
		t.Fatalf("records %+v", got.records)
	}

	// A new major version is refused with ErrVersion.
	e.reset()
	h.Major = FormatMajor + 1
	e.header(&h)
	got = readBytes(append(fileMagic[:], e.seal()...))
	if !errors.Is(got.err, ErrVersion) {
		t.Fatalf("major %d: err %v", h.Major, got.err)
	}

	// A chunk with a valid checksum but undecodable content: its rest is a gap.
	e.reset()
	e.record(&r1)
	bad := append(slices.Clone(e.buf[chunkHeaderLen:]), evBit|evProbe, 0xFF, 0xFF) // truncated varint
	got = readBytes(append(fileMagic[:], chunkOf(bad)...))
	if len(got.records) != 1 || len(got.gaps) != 1 || got.gaps[0].Bytes != 3 || got.stats.BadChunks != 1 {
		t.Fatalf("records %d gaps %+v stats %+v", len(got.records), got.gaps, got.stats)
	}
}

func TestRotatedPath(t *testing.T) {
	for _, c := range []struct {
		path string
		seq  int
		want string
	}{
		{"out/app-12.tgr", 0, "out/app-12.tgr"},
		{"out/app-12.tgr", 3, "out/app-12.3.tgr"},
		{"out.d/trace", 1, "out.d/trace.1"},
	} {
		if got := RotatedPath(c.path, c.seq); got != c.want {
			t.Errorf("RotatedPath(%q, %d) = %q, want %q", c.path, c.seq, got, c.want)
		}
	}
}
