package writer

import (
	"bytes"
	"os"
	"testing"
)

// TestTail cuts the middle out of a file: the copy reads without damage, has
// the header and the anchor's definitions, and ends with the file's last
// records, in order.
func TestTail(t *testing.T) {
	path, recs := anchoredFile(t, 0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	info, err := Tail(&out, path, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if info.FileBytes != int64(len(data)) || info.Chunks == 0 || info.AnchorBytes == 0 {
		t.Fatalf("info %+v for a file of %d bytes", info, len(data))
	}
	if got := int64(len(fileMagic)) + info.AnchorBytes + info.RecentBytes + info.Omitted; got != info.FileBytes {
		t.Errorf("magic + anchor + recent + omitted = %d, want the file's %d bytes", got, info.FileBytes)
	}
	if info.RecentBytes > 2000 || int64(out.Len()) != int64(len(fileMagic))+info.AnchorBytes+info.RecentBytes {
		t.Errorf("copied %d bytes, info %+v", out.Len(), info)
	}
	got := readAll(NewReader(&out))
	if got.err != nil || got.stats.Gaps != 0 || got.stats.BadChunks != 0 {
		t.Fatalf("the tail does not read cleanly: err %v, stats %+v", got.err, got.stats)
	}
	if len(got.headers) != 1 || got.headers[0].PID != 4242 {
		t.Errorf("headers %+v, want the file's one", got.headers)
	}
	defined := map[uint32]bool{}
	for _, d := range got.probes {
		defined[d.ID] = true
	}
	for id := uint32(0); id < 3; id++ {
		if !defined[id] {
			t.Errorf("probe %d, defined before the first record, is missing from the tail", id)
		}
	}
	n := len(got.records)
	if n == 0 || n >= len(recs) {
		t.Fatalf("%d of %d records in the tail", n, len(recs))
	}
	for i, r := range got.records {
		if want := recs[len(recs)-n+i]; r != want {
			t.Fatalf("tail record %d = %+v, want the file's %+v", i, r, want)
		}
	}

	// Asked for more than the file holds: the whole file, once.
	out.Reset()
	if info, err = Tail(&out, path, 1<<30); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), data) || info.Omitted != 0 {
		t.Errorf("a tail larger than the file is not the file: %d of %d bytes, omitted %d", out.Len(), len(data), info.Omitted)
	}
}

// TestTailWhileWriting reads a file whose last chunk is still being written
// (a part of it on disk): that chunk is left out, the rest reads cleanly.
func TestTailWhileWriting(t *testing.T) {
	path, _ := anchoredFile(t, 0)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spans := chunkSpans(t, data)
	lastStart := spans[len(spans)-1][0]
	torn := data[:lastStart+(len(data)-lastStart)/2]
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	info, err := Tail(&out, path, 3000)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(NewReader(&out))
	if got.err != nil || got.stats.Gaps != 0 || len(got.records) == 0 {
		t.Fatalf("tail of a file being written: err %v, stats %+v, %d records", got.err, got.stats, len(got.records))
	}
	if info.Omitted < int64(len(torn)-lastStart) {
		t.Errorf("omitted %d bytes, less than the %d of the chunk being written", info.Omitted, len(torn)-lastStart)
	}
}

func TestTailNotATrace(t *testing.T) {
	path := t.TempDir() + "/x.tgr"
	if err := os.WriteFile(path, []byte("hello, world"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Tail(&bytes.Buffer{}, path, 100); err == nil {
		t.Error("Tail of a text file succeeded")
	}
}

// FuzzTail: any file, trace or not, is cut without panicking; what Tail
// writes is at most the file and reads without errors; cutting costs at most
// readBound.
func FuzzTail(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := t.TempDir() + "/f.tgr"
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		var info TailInfo
		var err error
		readBound.Check(t, len(data), func() { info, err = Tail(&out, path, int64(len(data)/3)) })
		if err != nil {
			return
		}
		if out.Len() > len(data) || info.Omitted < 0 {
			t.Fatalf("wrote %d bytes of a %d-byte file, omitted %d", out.Len(), len(data), info.Omitted)
		}
		if got := readAll(NewReader(&out)); got.err != nil {
			t.Fatalf("the tail does not read: %v", got.err)
		}
	})
}
