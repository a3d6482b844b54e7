package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Following trace files. A stream (one writer, one process) is a sequence of
// files, seq 0, 1, 2, ... (rotation). Each file is read with writer.Reader
// from its start, through a tail that waits at the end of the file instead of
// ending it while more may come: so the Reader never sees a half-written
// chunk as a torn one, and whatever the format grows (new item kinds) reaches
// the shipper through the Reader, which skips what it does not know. A file
// ends when its successor exists (the writer closes a file before it starts
// the next), when the process that writes it is gone, or, with Once, at its
// end. The position in a stream is (file seq, items read from that file):
// a file only grows, so the same count of items is the same place after a
// restart, whatever the chunks hold.

// readBatch is what a follower hands to the shipper: items of one file of one
// stream, in file order, with the position after them.
type readBatch struct {
	hdr    *writer.Header // the file's header (every batch carries it)
	path   string
	seq    int
	items  int64 // items read from the file, this batch included
	probes []writer.ProbeDef
	recs   []writer.Record
	lost   uint64 // records the program's writer reported lost
	gaps   int64  // damaged stretches skipped
	ended  bool   // the stream has no more files and will get no more items
	// caughtUp: the batch ends where the file ends for now.
	caughtUp bool
}

// readBatchRecords is how many records a follower puts into one batch.
const readBatchRecords = 4096

// position is where a follower starts.
type position struct {
	path  string
	seq   int
	items int64
}

// follower reads one stream.
type follower struct {
	stream uint64
	hdr0   *writer.Header // the header discovery read, until the file's own
	start  position
	once   bool
	poll   time.Duration
	host   string // this machine's name, to tell whether a writer's process is gone
	out    chan<- *readBatch
	report func(error)
}

func (f *follower) run(ctx context.Context) {
	pos := f.start
	for {
		hdr, err := f.file(ctx, pos)
		if hdr == nil {
			hdr = f.hdr0
		}
		if err != nil {
			if ctx.Err() == nil {
				f.report(fmt.Errorf("following %s: %w", pos.path, err))
			}
			return
		}
		next := successor(pos.path, pos.seq)
		if h, _ := peekHeader(next); h != nil && hdr != nil && h.Stream == hdr.Stream && h.Seq == pos.seq+1 {
			pos = position{path: next, seq: pos.seq + 1}
			continue
		}
		select {
		case f.out <- &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, items: -1, ended: true}:
		case <-ctx.Done():
		}
		return
	}
}

// file reads one file from pos to its end and returns its header.
func (f *follower) file(ctx context.Context, pos position) (*writer.Header, error) {
	fh, err := os.Open(pos.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	t := &tail{f: fh, ctx: ctx, poll: f.poll, info: fi, path: pos.path}
	r := writer.NewReader(t)
	hdr := f.hdr0
	var b *readBatch
	var n int64
	send := func() error {
		if b == nil {
			return nil
		}
		b.items = n
		select {
		case f.out <- b:
			b = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	batch := func() *readBatch {
		if b == nil {
			b = &readBatch{hdr: hdr, path: pos.path, seq: pos.seq, recs: make([]writer.Record, 0, readBatchRecords)}
		}
		return b
	}
	t.final = func() bool {
		// About to wait: hand over what was read, so a quiet program's
		// records are not held back, and say that the reading is caught up.
		batch().caughtUp = true
		if send() != nil {
			return true
		}
		return f.once || f.ended(hdr, pos, t)
	}
	for {
		it, err := r.Next()
		if err == io.EOF {
			return hdr, send()
		}
		if err != nil {
			return hdr, err
		}
		n++
		skip := n <= pos.items
		switch it.Kind {
		case writer.KindHeader:
			hdr = it.Header
			if b != nil {
				b.hdr = hdr
			}
		case writer.KindProbe:
			// Definitions are kept even where records are skipped: the
			// records after the position need them.
			batch().probes = append(batch().probes, *it.Probe)
		case writer.KindRecord:
			if !skip {
				batch().recs = append(batch().recs, it.Record)
			}
		case writer.KindLoss:
			if !skip {
				batch().lost += it.Loss.Count
			}
		case writer.KindGap:
			if !skip {
				batch().gaps++
			}
		}
		if b != nil && len(b.recs) >= readBatchRecords {
			if err := send(); err != nil {
				return hdr, err
			}
		}
	}
}

// ended reports whether no more will be written to the file: its successor
// exists, it was truncated or replaced, or its writer's process is gone.
func (f *follower) ended(hdr *writer.Header, pos position, t *tail) bool {
	if h, _ := peekHeader(successor(pos.path, pos.seq)); h != nil && hdr != nil && h.Stream == hdr.Stream {
		return true
	}
	if fi, err := os.Stat(pos.path); err != nil || !os.SameFile(fi, t.info) || fi.Size() < t.off {
		return true
	}
	return hdr != nil && hdr.Host == f.host && !processAlive(hdr.PID)
}

// tail reads a file that may still grow: at its end it asks final whether
// more can come, and waits for it if so.
type tail struct {
	f     *os.File
	ctx   context.Context
	poll  time.Duration
	info  os.FileInfo
	path  string
	off   int64
	final func() bool
	done  bool
}

func (t *tail) Read(p []byte) (int, error) {
	for {
		n, err := t.f.Read(p)
		t.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if t.done {
			return 0, io.EOF
		}
		if t.final() {
			// Nothing more will be written: read what came meanwhile, then end.
			t.done = true
			continue
		}
		select {
		case <-t.ctx.Done():
			return 0, t.ctx.Err()
		case <-time.After(t.poll):
		}
	}
}

// successor is the path of file seq+1 of the stream whose file seq is at path
// (writer.RotatedPath's names: app.tgr, app.1.tgr, app.2.tgr, ...).
func successor(path string, seq int) string {
	base := path
	if seq > 0 {
		ext := filepath.Ext(path)
		stem := strings.TrimSuffix(path, ext)
		if i := strings.LastIndexByte(stem, '.'); i >= 0 && stem[i+1:] == strconv.Itoa(seq) {
			base = stem[:i] + ext
		}
	}
	return writer.RotatedPath(base, seq+1)
}

// peekHeader returns the header of the trace file at path; nil when it has
// none yet (a file just created) or cannot be read.
func peekHeader(path string) (*writer.Header, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := writer.NewReader(io.LimitReader(fh, 4<<20))
	for i := 0; i < 4; i++ {
		it, err := r.Next()
		if err != nil {
			return nil, nil
		}
		if it.Kind == writer.KindHeader {
			return it.Header, nil
		}
	}
	return nil, nil
}

// discovery finds trace files and the streams they belong to.
type discovery struct {
	patterns []string
	mu       sync.Mutex
	seen     map[string]fileKey // path → what it held when last looked at
}

type fileKey struct {
	stream uint64
	seq    int
	size   int64
}

// streamFile is a file of a stream found by a scan.
type streamFile struct {
	path string
	hdr  *writer.Header
}

// scan returns the first file found of each stream (the lowest seq present),
// streams in order of their files' names. A pattern is a file, a directory
// (its *.tgr files) or a glob.
func (d *discovery) scan() ([]streamFile, error) {
	var paths []string
	for _, p := range d.patterns {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			m, err := filepath.Glob(filepath.Join(p, "*.tgr"))
			if err != nil {
				return nil, err
			}
			paths = append(paths, m...)
		case err == nil:
			paths = append(paths, p)
		default:
			m, gerr := filepath.Glob(p)
			if gerr != nil {
				return nil, fmt.Errorf("trace pattern %q: %w", p, gerr)
			}
			paths = append(paths, m...)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = make(map[string]fileKey)
	}
	first := map[uint64]streamFile{}
	var order []uint64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		k, ok := d.seen[p]
		if !ok || fi.Size() < k.size || k.stream == 0 {
			h, _ := peekHeader(p)
			if h == nil {
				continue // no header yet
			}
			k = fileKey{stream: h.Stream, seq: h.Seq}
		}
		k.size = fi.Size()
		d.seen[p] = k
		f, ok := first[k.stream]
		if !ok {
			order = append(order, k.stream)
		}
		if !ok || k.seq < f.hdr.Seq {
			h, _ := peekHeader(p)
			if h == nil {
				continue
			}
			first[k.stream] = streamFile{path: p, hdr: h}
		}
	}
	out := make([]streamFile, 0, len(order))
	for _, s := range order {
		if f, ok := first[s]; ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// errNoTraces is returned by a run with Once when no trace file was found.
var errNoTraces = errors.New("no trace files found")
