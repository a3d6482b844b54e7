package writer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/internal/num"
)

func TestEncoderRoundTrip(t *testing.T) {
	recs := append(extremeRecords(), genRecords(rand.New(rand.NewPCG(1, 2)), 5000, 300)...)
	e := newEncoder(1 << 20)
	for i := range recs {
		e.record(&recs[i])
	}
	var d decoder
	c := cursor{b: e.buf[chunkHeaderLen:]}
	for i, want := range recs {
		var got Record
		d.event(&c, &got)
		if c.bad {
			t.Fatalf("record %d: decode failed", i)
		}
		if got != want {
			t.Fatalf("record %d: got %+v, want %+v", i, got, want)
		}
	}
	if c.i != len(c.b) {
		t.Fatalf("%d bytes left after the last record", len(c.b)-c.i)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			opt.OnFull = Block
			opt.ChunkBytes = 4096
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			defs := testProbes(500)
			for _, d := range defs {
				w.Define(d)
			}
			recs := append(extremeRecords(), genRecords(rand.New(rand.NewPCG(3, 4)), 100_000, len(defs))...)
			for i := range recs {
				w.Write(&recs[i])
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			st := w.Stats()
			if st.Written != uint64(len(recs)) || st.Dropped != 0 || st.Queued != 0 || st.Errors != 0 {
				t.Fatalf("stats %+v, want %d written", st, len(recs))
			}
			info, err := os.Stat(opt.Path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Bytes != uint64(info.Size()) {
				t.Fatalf("Stats.Bytes %d, file has %d", st.Bytes, info.Size())
			}
			got := readFile(t, opt.Path)
			if got.err != nil || len(got.gaps) != 0 || len(got.losses) != 0 {
				t.Fatalf("err %v, gaps %v, losses %v", got.err, got.gaps, got.losses)
			}
			if len(got.headers) != 1 {
				t.Fatalf("%d headers", len(got.headers))
			}
			h := got.headers[0]
			if h.Major != FormatMajor || h.Seq != 0 || h.Host != "testhost" || h.PID != 4242 ||
				h.Binary != "/usr/bin/app" || h.Clock != opt.Clock || h.Start == 0 || h.Stream == 0 {
				t.Fatalf("header %+v", h)
			}
			if !slices.Equal(got.probes, defs) {
				t.Fatalf("probe definitions differ: got %d, want %d", len(got.probes), len(defs))
			}
			if wr.name == "sync" {
				// One producer and a lock: the file keeps the write order.
				if !slices.Equal(got.records, recs) {
					t.Fatal("records differ from the written sequence")
				}
			} else {
				sameRecords(t, got.records, recs)
			}
			perRecord := float64(st.Bytes) / float64(len(recs))
			t.Logf("%d records, %d bytes, %.2f B/record", len(recs), st.Bytes, perRecord)
			if perRecord >= 20 {
				t.Errorf("%.1f bytes per record, want < 20", perRecord)
			}
		})
	}
}

func TestNull(t *testing.T) {
	var n Null
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := Record{Probe: 1}
			for i := 0; i < 1000; i++ {
				n.Write(&r)
			}
		}()
	}
	wg.Wait()
	if st := n.Stats(); st.Written != 8000 {
		t.Fatalf("Null counted %d, want 8000", st.Written)
	}
	// Ps from 64 on share a counter (Write pins; here nothing else runs).
	for _, pid := range []int{0, 63, 64, 1023} {
		n.WritePinned(pid)
	}
	if st := n.Stats(); st.Written != 8004 {
		t.Fatalf("Null counted %d after 4 WritePinned, want 8004", st.Written)
	}
	var nilAsync *Async
	nilAsync.Write(&Record{})
	nilAsync.Define(ProbeDef{})
	if nilAsync.Close() != nil || nilAsync.Flush() != nil || nilAsync.Stats() != (Stats{}) {
		t.Fatal("nil *Async is not a quiet no-op")
	}
	var nilSync *Sync
	nilSync.Write(&Record{})
	if nilSync.Close() != nil {
		t.Fatal("nil *Sync is not a quiet no-op")
	}
}

func TestWriteAllocs(t *testing.T) {
	r := Record{Probe: 3, EOI: 1, ESS: 1, Trace: 9, GID: 2, TIn: 100, TOut: 200}
	check := func(name string, w Sink) {
		t.Helper()
		if n := testing.AllocsPerRun(1000, func() { w.Write(&r) }); n != 0 {
			t.Errorf("%s: got %v alloc(s); want 0", name, n)
		}
	}
	for _, policy := range []OnFull{Drop, Block} {
		opt := testOptions(t)
		opt.OnFull = policy
		a, err := NewAsync(opt)
		if err != nil {
			t.Fatal(err)
		}
		a.Define(ProbeDef{ID: 3})
		check("Async", a)
		a.Close()
		check("Async after Close", a)
	}
	// Drop path: a tiny queue that the writer cannot drain while we hold it.
	opt := testOptions(t)
	opt.QueueSize = 1
	opt.OnFull = Drop
	a, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	a.defMu.Lock() // stalls the writer goroutine in its next pass
	check("Async dropping", a)
	a.defMu.Unlock()
	a.Close()
	if a.Stats().Dropped == 0 {
		t.Error("the drop path was not exercised")
	}

	s, err := NewSync(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	check("Sync", s)
	s.Close()
	fs, err := NewSync(Options{Path: "/dev/full"})
	if err != nil {
		t.Fatal(err)
	}
	check("Sync failing", fs)
	fs.Close()
	check("Null", &Null{})
}

func TestDropAccounting(t *testing.T) {
	opt := testOptions(t)
	opt.QueueSize = 256
	opt.OnFull = Drop
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	w.Define(ProbeDef{ID: 1, Name: "f"})
	const producers, each = 8, 20_000
	var wg sync.WaitGroup
	var stall sync.Once
	for p := 0; p < producers; p++ {
		p := p
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if p == 0 && i == each/2 {
					// Stall the writer for a moment so that drops are certain.
					stall.Do(func() {
						w.defMu.Lock()
						time.Sleep(20 * time.Millisecond)
						w.defMu.Unlock()
					})
				}
				r := Record{Probe: 1, Trace: uint64(p), EOI: uint32(i), TIn: int64(i), TOut: int64(p*each + i)}
				w.Write(&r)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Written+st.Dropped != producers*each || st.Queued != 0 {
		t.Fatalf("written %d + dropped %d != produced %d (queued %d)", st.Written, st.Dropped, producers*each, st.Queued)
	}
	if st.Dropped == 0 {
		t.Fatal("nothing was dropped; the test did not exercise the drop policy")
	}
	got := readFile(t, opt.Path)
	if got.err != nil || len(got.gaps) != 0 {
		t.Fatalf("err %v gaps %v", got.err, got.gaps)
	}
	if uint64(len(got.records)) != st.Written {
		t.Fatalf("file holds %d records, Stats.Written %d", len(got.records), st.Written)
	}
	if got.lost() != st.Dropped {
		t.Fatalf("loss records sum to %d, Stats.Dropped %d", got.lost(), st.Dropped)
	}
	// Every dropped record's exit time lies inside a loss record's span.
	seen := make(map[int64]bool, len(got.records))
	for _, r := range got.records {
		seen[r.TOut] = true
	}
	for tout := int64(0); tout < producers*each; tout++ {
		if seen[tout] {
			continue
		}
		covered := false
		for _, l := range got.losses {
			if l.Reason == LossQueueFull && l.From <= tout && tout <= l.To {
				covered = true
				break
			}
		}
		if !covered {
			t.Fatalf("dropped record with TOut %d is outside every loss record", tout)
		}
	}
	t.Logf("written %d, dropped %d in %d loss records", st.Written, st.Dropped, len(got.losses))
}

// TestBlockLosesNothing: under Block (the default) a producer whose queue is
// full drains it itself. With a queue of 64 the writer goroutine cannot keep
// up with producers that never yield, least of all with one P, where it runs
// only when a producer is preempted; yet every record is written, and each
// producer's records keep their order.
func TestBlockLosesNothing(t *testing.T) {
	for _, procs := range []int{0, 1} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			if procs > 0 {
				old := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(old)
			}
			opt := testOptions(t)
			opt.QueueSize = 64
			opt.ChunkBytes = 1024
			w, err := NewAsync(opt)
			if err != nil {
				t.Fatal(err)
			}
			w.Define(ProbeDef{ID: 1})
			const producers, each = 16, 10_000
			var wg sync.WaitGroup
			for p := 0; p < producers; p++ {
				p := p
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						r := Record{Probe: 1, Trace: uint64(p), EOI: uint32(i), TIn: int64(i), TOut: int64(i + 1)}
						w.Write(&r)
					}
				}()
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			st := w.Stats()
			if st.Written != producers*each || st.Dropped != 0 {
				t.Fatalf("stats %+v, want %d written, 0 dropped", st, producers*each)
			}
			got := readFile(t, opt.Path)
			if len(got.records) != producers*each || len(got.losses) != 0 || len(got.gaps) != 0 {
				t.Fatalf("read %d records, %d losses, %d gaps", len(got.records), len(got.losses), len(got.gaps))
			}
			next := make(map[uint64]uint32)
			for _, r := range got.records {
				if r.EOI != next[r.Trace] {
					t.Fatalf("producer %d: record %d after %d", r.Trace, r.EOI, next[r.Trace])
				}
				next[r.Trace]++
			}
			t.Logf("%d of %d records drained by their producers, %d wakes", st.Assisted, st.Written, st.Wakes)
		})
	}
}

func TestBlockedProducerReleasedByClose(t *testing.T) {
	opt := testOptions(t)
	opt.QueueSize = 1
	opt.OnFull = Block
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	w.defMu.Lock() // the writer stalls: producers fill their queue and block
	var wg sync.WaitGroup
	var produced atomic.Int64
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				r := Record{Probe: 1, TOut: int64(i)}
				w.Write(&r)
				produced.Add(1)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	w.defMu.Unlock()
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Written+st.Dropped != uint64(produced.Load()) || st.Dropped != 0 {
		t.Fatalf("stats %+v for %d produced", st, produced.Load())
	}
}

func TestRotation(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			opt.OnFull = Block
			opt.ChunkBytes = 512
			opt.RotateBytes = 8 << 10
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			defs := testProbes(40)
			for _, d := range defs[:20] {
				w.Define(d)
			}
			recs := genRecords(rand.New(rand.NewPCG(5, 6)), 20_000, 20)
			for i := range recs {
				if i == len(recs)/2 {
					for _, d := range defs[20:] {
						w.Define(d)
					}
				}
				if i > len(recs)/2 {
					recs[i].Probe += 20
				}
				w.Write(&recs[i])
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			st := w.Stats()
			if st.Files < 5 {
				t.Fatalf("only %d files", st.Files)
			}
			var stream uint64
			var total int
			for seq := 0; seq < st.Files; seq++ {
				p := RotatedPath(opt.Path, seq)
				info, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				// A file holds its anchor (header and definitions, twice), then
				// chunks up to RotateBytes, and at least one chunk.
				if limit := num.Max(opt.RotateBytes, anchorLen(t, p)) + int64(opt.ChunkBytes) + maxEventLen + chunkHeaderLen; info.Size() > limit {
					t.Errorf("%s: %d bytes, rotation at %d", p, info.Size(), opt.RotateBytes)
				}
				// Each file stands alone: a header and every probe its records use.
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				got := readAll(NewReader(f))
				f.Close()
				if got.err != nil || len(got.gaps) != 0 || len(got.headers) != 1 {
					t.Fatalf("%s: err %v gaps %v headers %d", p, got.err, got.gaps, len(got.headers))
				}
				h := got.headers[0]
				if seq == 0 {
					stream = h.Stream
				}
				if h.Seq != seq || h.Stream != stream {
					t.Fatalf("%s: header seq %d stream %x, want %d %x", p, h.Seq, h.Stream, seq, stream)
				}
				known := map[uint32]bool{}
				for _, d := range got.probes {
					known[d.ID] = true
				}
				for _, r := range got.records {
					if !known[r.Probe] {
						t.Fatalf("%s: record of probe %d, not defined in the file", p, r.Probe)
					}
				}
				total += len(got.records)
			}
			if total != len(recs) {
				t.Fatalf("files hold %d records, want %d", total, len(recs))
			}
			if _, err := os.Stat(RotatedPath(opt.Path, st.Files)); !os.IsNotExist(err) {
				t.Fatalf("an extra file exists: %v", err)
			}
			all := readFile(t, opt.Path) // Open follows the rotated files
			if len(all.headers) != st.Files {
				t.Fatalf("Open read %d files, want %d", len(all.headers), st.Files)
			}
			sameRecords(t, all.records, recs)
			if wr.name == "sync" && !slices.Equal(all.records, recs) {
				t.Fatal("rotated set read back out of order")
			}
			// OpenFiles puts a shuffled list back in order.
			paths := make([]string, st.Files)
			for i := range paths {
				paths[i] = RotatedPath(opt.Path, st.Files-1-i)
			}
			r, err := OpenFiles(paths...)
			if err != nil {
				t.Fatal(err)
			}
			shuffled := readAll(r)
			r.Close()
			for i, h := range shuffled.headers {
				if h.Seq != i {
					t.Fatalf("OpenFiles: file %d has seq %d", i, h.Seq)
				}
			}
		})
	}
}

func TestConcurrentUse(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			opt.OnFull = Block
			opt.ChunkBytes = 2048
			opt.RotateBytes = 64 << 10
			opt.FlushInterval = 5 * time.Millisecond
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			const producers, each = 16, 5000
			var wg sync.WaitGroup
			for p := 0; p < producers; p++ {
				p := p
				wg.Add(1)
				go func() {
					defer wg.Done()
					w.Define(ProbeDef{ID: uint32(p), Name: "p"})
					for i := 0; i < each; i++ {
						r := Record{Probe: uint32(p), Trace: uint64(p), EOI: uint32(i), TIn: int64(i), TOut: int64(i) + 5}
						w.Write(&r)
						switch i % 1000 {
						case 10:
							w.Flush()
						case 20:
							w.Stats()
						}
					}
				}()
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			if err := w.Flush(); !errors.Is(err, ErrClosed) {
				t.Fatalf("Flush after Close: %v", err)
			}
			st := w.Stats()
			if st.Written != producers*each {
				t.Fatalf("stats %+v", st)
			}
			got := readFile(t, opt.Path)
			if len(got.records) != producers*each || len(got.gaps) != 0 {
				t.Fatalf("read %d records, %d gaps", len(got.records), len(got.gaps))
			}
			// Per producer, the EOIs are all there (order across Ps is not kept by Async).
			count := make([]int, producers)
			for _, r := range got.records {
				count[r.Trace]++
			}
			for p, c := range count {
				if c != each {
					t.Fatalf("producer %d: %d records", p, c)
				}
			}
			checkNoWriterGoroutines(t)
		})
	}
}

func TestWriteAfterClose(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			w, err := wr.new(testOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			r := Record{Probe: 1}
			w.Write(&r)
			w.Close()
			w.Write(&r)
			w.Define(ProbeDef{ID: 2})
			st := w.Stats()
			if st.Written != 1 || st.Dropped != 1 {
				t.Fatalf("stats %+v, want 1 written, 1 dropped", st)
			}
		})
	}
}

func TestFlushInterval(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			opt.FlushInterval = 20 * time.Millisecond
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.Define(ProbeDef{ID: 1})
			for i := 0; i < 10; i++ {
				r := Record{Probe: 1, EOI: uint32(i)}
				w.Write(&r)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				b, err := os.ReadFile(opt.Path)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(readBytes(b).records); n == 10 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("records not written without Flush")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

func TestCreateError(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, wr := range writers {
		if _, err := wr.new(Options{Path: filepath.Join(blocker, "x", "app.tgr")}); err == nil {
			t.Errorf("%s: creating a file under a regular file succeeded", wr.name)
		}
	}
	checkNoWriterGoroutines(t)
}

// TestDiskFull writes to /dev/full, where every write fails with ENOSPC.
func TestDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			var reports atomic.Int32
			opt := Options{Path: "/dev/full", FlushInterval: 5 * time.Millisecond, ChunkBytes: 256,
				OnError: func(error) { reports.Add(1) }}
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			w.Define(ProbeDef{ID: 1})
			for i := 0; i < 10_000; i++ {
				r := Record{Probe: 1, EOI: uint32(i)}
				w.Write(&r)
			}
			time.Sleep(30 * time.Millisecond) // a few retries
			if err := w.Flush(); err == nil {
				t.Error("Flush to a full disk returned nil")
			}
			if err := w.Close(); err == nil {
				t.Error("Close on a full disk returned nil")
			}
			st := w.Stats()
			if st.Written != 0 || st.Dropped != 10_000 || st.Errors < 2 || st.Queued != 0 {
				t.Fatalf("stats %+v", st)
			}
			if st.Errors > 100 {
				t.Fatalf("%d failed writes for 10000 records: a failing file is retried per record, not per interval", st.Errors)
			}
			if n := reports.Load(); n != 1 {
				t.Fatalf("OnError called %d times, want once", n)
			}
		})
	}
}

// flakyFile fails writes while failing is set; a failed write may write a prefix.
type flakyFile struct {
	f       *os.File
	failing atomic.Bool
	partial atomic.Bool
	panics  atomic.Bool // Write panics: stands for a bug inside the writer
}

func (ff *flakyFile) Write(b []byte) (int, error) {
	if ff.panics.Load() {
		panic("injected writer bug")
	}
	if ff.failing.Load() {
		n := 0
		if ff.partial.Load() {
			n, _ = ff.f.Write(b[:len(b)/2])
		}
		return n, errors.New("injected failure")
	}
	return ff.f.Write(b)
}

func (ff *flakyFile) Close() error { return ff.f.Close() }

// useFlakyFile makes opt's writer write through a flakyFile, which it returns.
func useFlakyFile(opt *Options) *flakyFile {
	ff := new(flakyFile)
	opt.create = func(name string) (io.WriteCloser, error) {
		f, err := createFile(name)
		if err != nil {
			return nil, err
		}
		ff.f = f.(*os.File)
		return ff, nil
	}
	return ff
}

// TestWriteErrorRecovery: writes fail for a while (leaving torn chunks), then work
// again. The file then holds the records written before and after, a loss record for
// those in between, and the probe definitions the failed chunks carried.
func TestWriteErrorRecovery(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			var reports atomic.Int32
			opt := testOptions(t)
			opt.OnFull = Block
			opt.ChunkBytes = 512
			opt.OnError = func(error) { reports.Add(1) }
			ff := useFlakyFile(&opt)
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			write := func(probe uint32, n int) {
				for i := 0; i < n; i++ {
					r := Record{Probe: probe, EOI: uint32(i), TOut: int64(probe)*1_000_000 + int64(i)}
					w.Write(&r)
				}
			}
			w.Define(ProbeDef{ID: 1})
			write(1, 1000)
			w.Flush()
			ff.failing.Store(true)
			ff.partial.Store(true)
			w.Define(ProbeDef{ID: 2})
			write(2, 1000)
			w.Flush()
			w.Flush()
			ff.failing.Store(false)
			w.Flush() // recovers
			write(2, 1000)
			w.Define(ProbeDef{ID: 3})
			write(3, 1000)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			st := w.Stats()
			if st.Written+st.Dropped != 4000 || st.Dropped == 0 || st.Errors == 0 {
				t.Fatalf("stats %+v", st)
			}
			if n := reports.Load(); n != 1 {
				t.Fatalf("OnError called %d times, want once", n)
			}
			got := readFile(t, opt.Path)
			if got.err != nil {
				t.Fatal(got.err)
			}
			if uint64(len(got.records)) != st.Written || got.lost() != st.Dropped {
				t.Fatalf("read %d records, %d lost; stats %+v", len(got.records), got.lost(), st)
			}
			if len(got.gaps) == 0 {
				t.Fatal("the torn chunks were not reported")
			}
			known := map[uint32]bool{}
			for _, d := range got.probes {
				known[d.ID] = true
			}
			if !known[1] || !known[2] || !known[3] {
				t.Fatalf("probe definitions in the file: %v", got.probes)
			}
			for _, l := range got.losses {
				if l.Reason != LossWriteError || l.From < 2_000_000 || l.To >= 3_000_000 {
					t.Fatalf("loss %+v", l)
				}
			}
		})
	}
}

// TestInternalPanic: a panic inside the writer (here the file's Write; in life a
// bug in tigris) never reaches the program: it is reported once, the writer
// closes, producers under Block are not left waiting, Flush and Close return,
// and every record is counted as written or dropped.
func TestInternalPanic(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			var reports []string
			var mu sync.Mutex
			opt := testOptions(t)
			opt.OnFull = Block
			opt.QueueSize = 64
			opt.ChunkBytes = 512
			opt.OnError = func(err error) {
				mu.Lock()
				reports = append(reports, err.Error())
				mu.Unlock()
			}
			ff := useFlakyFile(&opt)
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			w.Define(ProbeDef{ID: 1})
			const before, after = 1000, 20_000 // after: far more than the queues hold
			for i := 0; i < before; i++ {
				w.Write(&Record{Probe: 1, EOI: uint32(i)})
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			ff.panics.Store(true)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := 0; i < after; i++ {
					w.Write(&Record{Probe: 1, EOI: uint32(i)})
				}
				w.Flush()
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("producers blocked after the writer failed")
			}
			if err := w.Close(); err == nil || !strings.Contains(err.Error(), "injected writer bug") {
				t.Errorf("Close: %v", err)
			}
			st := w.Stats()
			if st.Written != before || st.Written+st.Dropped != before+after || st.Queued != 0 {
				t.Errorf("stats %+v; want %d written and %d dropped", st, before, after)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 1 || !strings.Contains(reports[0], "internal error: injected writer bug") {
				t.Errorf("reports %q", reports)
			}
			if got := readFile(t, opt.Path); got.err != nil || len(got.records) != before {
				t.Errorf("the file holds %d records (%v); want the %d written before", len(got.records), got.err, before)
			}
		})
	}
}

// TestRotationFailure: the directory disappears and cannot be recreated, so the next
// file cannot be created. Nothing panics, the error is reported once and counted.
func TestRotationFailure(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			var reports atomic.Int32
			opt := testOptions(t)
			opt.ChunkBytes = 256
			opt.RotateBytes = 1024
			opt.FlushInterval = 5 * time.Millisecond
			opt.OnError = func(error) { reports.Add(1) }
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(opt.Path)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, nil, 0o644); err != nil { // a file where the directory was
				t.Fatal(err)
			}
			for i := 0; i < 5000; i++ {
				r := Record{Probe: 1, EOI: uint32(i)}
				w.Write(&r)
			}
			w.Close()
			st := w.Stats()
			if st.Written+st.Dropped != 5000 || st.Errors == 0 || st.Dropped == 0 {
				t.Fatalf("stats %+v", st)
			}
			if n := reports.Load(); n != 1 {
				t.Fatalf("OnError called %d times, want once", n)
			}
		})
	}
}

// anchorLen is the length of the file's start up to its first chunk that is
// not all header and definitions.
func anchorLen(t *testing.T, path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := len(fileMagic)
	for off+chunkHeaderLen < len(data) {
		n := int(binary.LittleEndian.Uint32(data[off+4:]))
		c := cursor{b: data[off+chunkHeaderLen : off+chunkHeaderLen+n]}
		for c.i < len(c.b) && !c.bad && c.b[c.i]&evBit == 0 && (c.b[c.i] == wireHeader || c.b[c.i] == wireProbe) {
			c.i++
			c.i += int(c.uvarint())
		}
		if c.i < len(c.b) {
			break
		}
		off += chunkHeaderLen + n
	}
	return int64(off)
}
