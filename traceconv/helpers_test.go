package traceconv

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// clockWall is the wall time (Unix ns) of monotonic 0 in test streams, so record
// times convert to known wall times: wall = clockWall + t.
const clockWall = 1_700_000_000_000_000_000

var testProbes = []writer.ProbeDef{
	{ID: 1, Signature: "example.com/shop.Handle(context.Context, string) error", Package: "example.com/shop", Name: "Handle", File: "/src/shop/handle.go", Line: 10},
	{ID: 2, Signature: "example.com/shop.(*Store).Find(int) (example.com/shop.Owner, error)", Package: "example.com/shop", Recv: "Store", Name: "Find", File: "/src/shop/store.go", Line: 20},
	{ID: 3, Signature: "example.com/shop.decode([]byte)", Package: "example.com/shop", Name: "decode", File: "/src/shop/codec.go", Line: 30},
}

// testRecords, in the order the monitor writes them (at exit), are three traces:
//
//	trace 1, goroutine 7: Handle 0–1000 { Find 100–400 error { decode 150–250 }, Find 500–900 }
//	trace 2, goroutine 8: Handle 2000–2600 panic { decode 2100–2200 }
//	trace 3, goroutine 9: decode 3000–3100, its caller (ESS 0) not recorded
//
// Exclusive times: Handle 300 and 500, Find 200 and 400, decode 100 each.
var testRecords = []writer.Record{
	{Probe: 3, EOI: 2, ESS: 2, Trace: 1, GID: 7, TIn: 150, TOut: 250},
	{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 7, TIn: 100, TOut: 400, Flags: writer.FlagError},
	{Probe: 2, EOI: 3, ESS: 1, Trace: 1, GID: 7, TIn: 500, TOut: 900, Flags: writer.FlagSize, Size: 3},
	{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 7, TIn: 0, TOut: 1000},
	{Probe: 3, EOI: 1, ESS: 1, Trace: 2, GID: 8, TIn: 2100, TOut: 2200},
	{Probe: 1, EOI: 0, ESS: 0, Trace: 2, GID: 8, TIn: 2000, TOut: 2600, Flags: writer.FlagPanic},
	{Probe: 3, EOI: 1, ESS: 1, Trace: 3, GID: 9, TIn: 3000, TOut: 3100},
}

// writeStream writes a trace file with the real synchronous writer and returns
// its path.
func writeStream(t testing.TB, dir string, pid int, defs []writer.ProbeDef, recs []writer.Record) string {
	t.Helper()
	path := filepath.Join(dir, "app-"+strconv.Itoa(pid)+".tgr")
	w, err := writer.NewSync(writer.Options{
		Path: path, Host: "h1", PID: pid, Binary: "/bin/app",
		Clock: writer.ClockBase{Wall: clockWall, Mono: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		w.Define(d)
	}
	for i := range recs {
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// testFile writes the standard test stream.
func testFile(t testing.TB) string {
	t.Helper()
	return writeStream(t, t.TempDir(), 42, testProbes, testRecords)
}

// appendLoss appends a chunk holding one loss item to the file at path, as the
// writer does after a queue overflow (docs/trace-format.md, "Loss record").
func appendLoss(t testing.TB, path string, count uint64, from, to int64) {
	t.Helper()
	var body []byte
	body = binary.AppendUvarint(body, 1) // reason: queue full
	body = binary.AppendUvarint(body, count)
	body = binary.AppendVarint(body, from)
	body = binary.AppendVarint(body, to)
	payload := append([]byte{0x03}, binary.AppendUvarint(nil, uint64(len(body)))...)
	payload = append(payload, body...)
	appendChunk(t, path, payload)
}

func appendChunk(t testing.TB, path string, payload []byte) {
	t.Helper()
	var lenb [4]byte
	binary.LittleEndian.PutUint32(lenb[:], uint32(len(payload)))
	tab := crc32.MakeTable(crc32.Castagnoli)
	crc := crc32.Update(crc32.Update(0, tab, lenb[:]), tab, payload)
	chunk := []byte{0xD9, 'T', 'G', 'C'}
	chunk = append(chunk, lenb[:]...)
	chunk = binary.LittleEndian.AppendUint32(chunk, crc)
	chunk = append(chunk, payload...)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(chunk); err != nil {
		t.Fatal(err)
	}
}

func openTest(t testing.TB, paths ...string) *writer.Reader {
	t.Helper()
	r, skipped, err := Open(paths)
	if err != nil || len(skipped) > 0 {
		t.Fatalf("Open(%q): %v, skipped %v", paths, err, skipped)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
