package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// fileRecords returns the records of one trace file.
func fileRecords(t *testing.T, path string) []writer.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []writer.Record
	for rd := writer.NewReader(f); ; {
		it, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == writer.KindRecord {
			recs = append(recs, it.Record)
		}
	}
	return recs
}

// spanKey is the receiver's key of the span of r in stream.
func spanKey(stream uint64, r *writer.Record) string {
	var tid [16]byte
	hi, lo := traceID(stream, r.Trace)
	binary.BigEndian.PutUint64(tid[:], hi)
	binary.BigEndian.PutUint64(tid[8:], lo)
	var sid [8]byte
	binary.BigEndian.PutUint64(sid[:], spanID(stream, r.Trace, r.EOI))
	return otlptest.Key(tid[:], sid[:])
}

// TestShippedFilesRemoved: the shipper stops with its checkpoint in the
// middle of a rotated stream; the stream goes on, and whoever keeps the
// directory removes the files up to the checkpoint's (shipped, mostly) and
// one more further on. A restart goes on with the files that are left:
// every record in them arrives once, the skipped files are counted as gaps,
// and a run with Once ends.
func TestShippedFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	calls := simulate(rand.New(rand.NewPCG(11, 12)), 4, 3000, false)
	r := otlptest.New(t)
	o := testOptions(r, dir)
	const steps = 20
	per := (len(calls) + steps - 1) / steps
	simFile(t, path, calls, 8<<10, steps, func(i int) {
		if i != steps/2 {
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := Run(ctx, o); done <- err }()
		waitFor(t, "the records written so far", func() bool { n, _ := r.Count(); return n >= (i+1)*per })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	sid := streamOf(t, path)
	ck, err := os.ReadFile(o.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for seq := 0; ; seq++ {
		if _, err := os.Stat(writer.RotatedPath(path, seq)); err != nil {
			break
		}
		seqs = append(seqs, seq)
	}
	// The checkpoint's file: the last one the first run read.
	var cf ckptFile
	if err := gob.NewDecoder(bytes.NewReader(ck)).Decode(&cf); err != nil || len(cf.Streams) != 1 {
		t.Fatalf("checkpoint: %v, %d streams", err, len(cf.Streams))
	}
	at := cf.Streams[0].Seq
	if at+3 > len(seqs)-1 {
		t.Fatalf("the checkpoint is at file %d of %d: not enough files after it", at, len(seqs))
	}
	removed := map[int]bool{}
	for seq := 0; seq <= at; seq++ {
		removed[seq] = true
	}
	removed[at+2] = true
	var want []writer.Record
	for _, seq := range seqs {
		p := writer.RotatedPath(path, seq)
		if removed[seq] {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want = append(want, fileRecords(t, p)...)
	}

	before, _ := r.Count()
	o.Once = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run with Once did not end")
	}
	spans := r.Spans()
	missing := 0
	for i := range want {
		if _, ok := spans[spanKey(sid, &want[i])]; !ok {
			missing++
		}
	}
	if n, dups := r.Count(); missing > 0 || dups > 0 {
		t.Errorf("of the %d records left in the files, %d have no span; %d spans arrived twice (%d spans before the restart, %d after)", len(want), missing, dups, before, n)
	}
	if st.Gaps < 2 || st.Ended != 1 {
		t.Errorf("stats %+v: want the two stretches of removed files counted as gaps and the stream ended", st)
	}
}

// TestUnreadableFileOnce: a file that cannot be read (here: a directory where
// the checkpoint's file was) ends a run with Once instead of hanging it, and
// the stream is not marked ended, so a later run reads on.
func TestUnreadableFileOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.tgr")
	calls := simulate(rand.New(rand.NewPCG(13, 14)), 2, 500, false)
	simFile(t, path, calls, 0, 1, nil)
	f := &follower{stream: streamOf(t, path), start: position{path: path}, once: true, poll: time.Millisecond,
		later: func(uint64, int) (streamFile, bool) { return streamFile{}, false }, report: func(error) {}}
	out := make(chan *readBatch, 64)
	f.out = out
	// A reader that fails: the file is a directory by the time it is opened.
	os.Rename(path, path+".moved")
	os.Mkdir(path, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go f.run(ctx)
	select {
	case b := <-out:
		if !b.failed || b.ended {
			t.Errorf("the follower's last batch: failed %v ended %v, want failed and not ended", b.failed, b.ended)
		}
	case <-ctx.Done():
		t.Fatal("the follower neither read nor gave up")
	}
}

// TestDamagedAndConcatenatedFile: two streams' files concatenated into one
// (a valid stream for writer.Reader), with damage in the middle of the
// first: every record the reader recovers arrives once, under its own
// stream, and the damage is counted.
func TestDamagedAndConcatenatedFile(t *testing.T) {
	dir := t.TempDir()
	var parts [][]byte
	for i := range 2 {
		p := filepath.Join(t.TempDir(), "part.tgr")
		simFile(t, p, simulate(rand.New(rand.NewPCG(uint64(20+i), 21)), 3, 800, false), 0, 4, nil)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, b)
	}
	// Damage a stretch in the middle of the first file's chunks.
	mid := len(parts[0]) / 2
	for i := mid; i < mid+64; i++ {
		parts[0][i] ^= 0x5a
	}
	path := filepath.Join(dir, "joined.tgr")
	if err := os.WriteFile(path, append(parts[0], parts[1]...), 0o644); err != nil {
		t.Fatal(err)
	}
	// What the reader recovers, each record under the stream of the header
	// before it.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var stream uint64
	streams := map[uint64]bool{}
	for rd := writer.NewReader(f); ; {
		it, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindHeader:
			stream = it.Header.Stream
			streams[stream] = true
		case writer.KindRecord:
			keys = append(keys, spanKey(stream, &it.Record))
		}
	}
	f.Close()
	if len(streams) != 2 {
		t.Fatalf("%d streams in the joined file", len(streams))
	}
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.BatchSpans = 100
	// A run stopped in the middle, then one with Once that reads on from
	// its checkpoint, then another that finds nothing new.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, o); done <- err }()
	waitFor(t, "a third of the spans", func() bool { n, _ := r.Count(); return n >= len(keys)/3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	o.Once = true
	var st Stats
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		st, err = Run(ctx, o)
		if err != nil || ctx.Err() != nil {
			t.Fatalf("run: %v (%v)", err, ctx.Err())
		}
		cancel()
	}
	spans := r.Spans()
	missing := 0
	for _, k := range keys {
		if _, ok := spans[k]; !ok {
			missing++
		}
	}
	if n, dups := r.Count(); missing > 0 || dups > 0 || n != len(keys) {
		t.Errorf("%d spans (%d twice) for the %d records recovered, %d of them missing", n, dups, len(keys), missing)
	}
	if st.Gaps == 0 {
		t.Errorf("stats %+v: the damage is not counted", st)
	}
}
