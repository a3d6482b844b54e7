package writer

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
)

// anchoredFile writes, with Sync and small chunks, a file whose first records
// use probes 0–2 defined before them, and whose later records use probes 3–5
// defined midway; rotate > 0 rotates. It returns the first file's path.
func anchoredFile(t *testing.T, rotate int64) (path string, recs []Record) {
	opt := testOptions(t)
	opt.ChunkBytes = 256
	opt.RotateBytes = rotate
	w, err := NewSync(opt)
	if err != nil {
		t.Fatal(err)
	}
	defs := testProbes(6)
	for _, d := range defs[:3] {
		w.Define(d)
	}
	recs = genRecords(rand.New(rand.NewPCG(3, 4)), 400, 3)
	for i := range recs {
		if i == len(recs)/2 {
			for _, d := range defs[3:] {
				w.Define(d)
			}
		}
		if i >= len(recs)/2 {
			recs[i].Probe += 3
		}
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return opt.Path, recs
}

// chunkSpans returns the offsets of the chunks of a file: [start, end) each.
func chunkSpans(t testing.TB, data []byte) [][2]int {
	var spans [][2]int
	for off := len(fileMagic); off < len(data); {
		if !bytes.HasPrefix(data[off:], syncMarker[:]) {
			t.Fatalf("no chunk at %d", off)
		}
		end := off + chunkHeaderLen + int(binary.LittleEndian.Uint32(data[off+4:]))
		spans = append(spans, [2]int{off, end})
		off = end
	}
	return spans
}

// checkNamed reads data and checks that a header comes before the first record
// and that every record's probe was defined before it. It returns the records.
func checkNamed(t *testing.T, data []byte, what string) []Record {
	t.Helper()
	r := NewReader(bytes.NewReader(data))
	var recs []Record
	defined := map[uint32]bool{}
	headers := 0
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		switch it.Kind {
		case KindHeader:
			headers++
		case KindProbe:
			defined[it.Probe.ID] = true
		case KindRecord:
			if headers == 0 {
				t.Fatalf("%s: a record before any header", what)
			}
			if !defined[it.Record.Probe] {
				t.Fatalf("%s: record of probe %d before its definition", what, it.Record.Probe)
			}
			recs = append(recs, it.Record)
		}
	}
	if headers != 1 {
		t.Errorf("%s: %d headers; want 1 (the repeat is not returned)", what, headers)
	}
	return recs
}

// TestDamagedChunkLosesOnlyItsRecords damages each chunk of a file in turn: the
// header and the definitions are written twice (the anchor at the start, and
// each later definition in two consecutive chunks), so every other chunk's
// records are read with their names. Before, damage to the first chunk lost
// every name of the file.
func TestDamagedChunkLosesOnlyItsRecords(t *testing.T) {
	path, recs := anchoredFile(t, 0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkNamed(t, data, "undamaged"); len(got) != len(recs) {
		t.Fatalf("undamaged: %d of %d records", len(got), len(recs))
	}
	spans := chunkSpans(t, data)
	for k, sp := range spans {
		// The records of chunk k alone.
		alone := append(append([]byte{}, fileMagic[:]...), data[sp[0]:sp[1]]...)
		inChunk := len(readBytes(alone).records)
		bad := slices.Clone(data)
		bad[sp[0]+chunkHeaderLen] ^= 0xFF
		got := checkNamed(t, bad, "chunk "+strconv.Itoa(k)+" damaged")
		if len(got) != len(recs)-inChunk {
			t.Errorf("chunk %d damaged: %d records; want %d (all but its own %d)", k, len(got), len(recs)-inChunk, inChunk)
		}
	}
}

// TestDamagedAnchorAfterRotation: each rotated file starts with its own anchor,
// twice; damage to a later file's first chunk costs it no name either.
func TestDamagedAnchorAfterRotation(t *testing.T) {
	path, _ := anchoredFile(t, 2<<10)
	for seq := 1; ; seq++ {
		data, err := os.ReadFile(RotatedPath(path, seq))
		if os.IsNotExist(err) {
			if seq < 3 {
				t.Fatalf("only %d files", seq)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want := len(checkNamed(t, data, "file "+strconv.Itoa(seq)))
		sp := chunkSpans(t, data)[0]
		data[sp[0]+chunkHeaderLen+3] ^= 0xFF
		if got := checkNamed(t, data, "file "+strconv.Itoa(seq)+" damaged"); len(got) != want {
			t.Errorf("file %d with its first chunk damaged: %d records; want %d", seq, len(got), want)
		}
	}
}

// TestReadUnanchoredFile: files written before anchors (header and definitions
// once) read as they did.
func TestReadUnanchoredFile(t *testing.T) {
	e := newEncoder(1024)
	h := Header{Major: 1, Minor: 0, Stream: 9, Host: "h", Binary: "b"}
	e.header(&h)
	d := ProbeDef{ID: 1, Signature: "func main.f()", Package: "main", Name: "f"}
	e.probe(&d)
	file := append(fileMagic[:], e.seal()...)
	e.reset()
	r1 := Record{Probe: 1, EOI: 0, TIn: 10, TOut: 20}
	e.record(&r1)
	file = append(file, e.seal()...)
	got := readBytes(file)
	if got.err != nil || len(got.gaps) != 0 || len(got.headers) != 1 || len(got.probes) != 1 || len(got.records) != 1 {
		t.Fatalf("err %v gaps %v: %d headers, %d probes, %d records; want 1 each",
			got.err, got.gaps, len(got.headers), len(got.probes), len(got.records))
	}
	if got.headers[0].Minor != 0 || got.stats.Probes != 1 {
		t.Errorf("header %+v, %d probes counted", got.headers[0], got.stats.Probes)
	}
}
