package export

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// The checkpoint is a snapshot of the shipper's state at a moment: per
// stream, the position reached in its files and every record read there that
// was not yet delivered (held in open traces, waiting to settle, or in a
// batch not yet acknowledged), with the parents already decided. A restart
// loads it, sends what it holds and reads on from the position: nothing is
// lost, since whatever is not delivered is either after the position or in
// the snapshot, and nothing delivered before the snapshot is sent again.
// It is written (to a temporary file, synced, renamed) when something was
// delivered since the last one, at most every CheckpointEvery, and when the
// shipper stops; a snapshot is only needed to avoid re-sending, since
// without it the older one leads to the same records again. So a crash
// re-sends at most what was delivered in the last CheckpointEvery, with the
// same span ids; a stop (SIGTERM, Ctrl-C) re-sends nothing.

const checkpointVersion = 1

type ckptFile struct {
	Version int
	Written time.Time
	Streams []ckptStream
	Stats   Stats
}

type ckptStream struct {
	Header    writer.Header
	Probes    []writer.ProbeDef
	Path      string
	Seq       int
	Items     int64
	Records   int64
	Ended     bool
	Open      []ckptTrace
	Spans     []ckptSpan // made, not delivered
	Completed []uint64
}

type ckptTrace struct {
	ID       uint64
	Recs     []writer.Record
	Complete bool
	Partial  bool
	Next     uint32
	Holes    []uint32
}

type ckptSpan struct {
	Rec       writer.Record
	Parent    uint32
	HasParent bool
	Missing   uint32
}

// snapshot collects the state.
func (s *shipper) snapshot() *ckptFile {
	undelivered := map[*stream][]ckptSpan{}
	addBatch := func(b *batch) {
		for _, g := range b.groups {
			for _, sp := range g.spans {
				undelivered[g.st] = append(undelivered[g.st], ckptSpan{Rec: sp.rec, Parent: sp.parent, HasParent: sp.hasParent, Missing: sp.missing})
			}
		}
	}
	if s.forming != nil {
		addBatch(s.forming)
	}
	for _, b := range s.ready {
		addBatch(b)
	}
	for b := range s.inflight {
		addBatch(b)
	}
	f := &ckptFile{Version: checkpointVersion, Written: time.Now(), Stats: s.snapshotStats()}
	f.Stats.SpansPending = 0
	for _, st := range s.order {
		cs := ckptStream{
			Header: st.hdr, Path: st.path, Seq: st.seq, Items: st.items, Records: st.records,
			Ended: st.ended, Spans: undelivered[st], Completed: append([]uint64(nil), st.completed.ring...),
		}
		for _, p := range st.probes {
			cs.Probes = append(cs.Probes, p.def)
		}
		for id, t := range st.traces {
			recs := make([]writer.Record, len(t.recs))
			for i := range t.recs {
				recs[i] = t.recs[i].Record
			}
			cs.Open = append(cs.Open, ckptTrace{ID: id, Recs: recs,
				Complete: t.complete, Partial: t.partial, Next: t.next, Holes: append([]uint32(nil), t.holes...)})
		}
		f.Streams = append(f.Streams, cs)
	}
	return f
}

func (s *shipper) writeCheckpoint() error {
	if s.o.Checkpoint == "" {
		s.dirty = false
		return nil
	}
	start := time.Now()
	f := s.snapshot()
	if err := writeFileAtomic(s.o.Checkpoint, func(w *bufio.Writer) error { return gob.NewEncoder(w).Encode(f) }); err != nil {
		return fmt.Errorf("export: writing the checkpoint: %w", err)
	}
	s.dirty = false
	s.lastCkpt = time.Now()
	s.ckptCost = s.lastCkpt.Sub(start)
	return nil
}

// writeFileAtomic writes path through a synced temporary file and a rename,
// so a crash leaves the old file or the new one, never a mix.
func writeFileAtomic(path string, write func(*bufio.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// loadCheckpoint restores the state and returns where each stream's
// follower starts.
func (s *shipper) loadCheckpoint() (map[uint64]position, error) {
	starts := map[uint64]position{}
	if s.o.Checkpoint == "" {
		return starts, nil
	}
	fh, err := os.Open(s.o.Checkpoint)
	if errors.Is(err, fs.ErrNotExist) {
		return starts, nil
	}
	if err != nil {
		return nil, fmt.Errorf("export: reading the checkpoint: %w", err)
	}
	defer fh.Close()
	var f ckptFile
	if err := gob.NewDecoder(bufio.NewReader(fh)).Decode(&f); err != nil {
		return nil, fmt.Errorf("export: checkpoint %s is damaged (%v); remove it to export everything again (spans already delivered would be sent twice)", s.o.Checkpoint, err)
	}
	if f.Version != checkpointVersion {
		return nil, fmt.Errorf("export: checkpoint %s has version %d, this tigris reads version %d; remove it to export everything again", s.o.Checkpoint, f.Version, checkpointVersion)
	}
	s.stats = f.Stats
	now := time.Now()
	for i := range f.Streams {
		cs := &f.Streams[i]
		h := cs.Header
		st := newStream(&h, s.resource(h.Host, h.PID, h.Binary))
		for j := range cs.Probes {
			st.define(&cs.Probes[j])
		}
		st.path, st.seq, st.items, st.records, st.ended = cs.Path, cs.Seq, cs.Items, cs.Records, cs.Ended
		for _, id := range cs.Completed {
			st.completed.add(id)
		}
		for _, t := range cs.Open {
			recs := make([]held, len(t.Recs))
			for j := range t.Recs {
				recs[j] = held{Record: t.Recs[j], at: st.records}
			}
			ot := &openTrace{recs: recs, since: now, complete: t.Complete, partial: t.Partial, next: t.Next, holes: t.Holes}
			st.traces[t.ID] = ot
			s.asm.open += int64(len(t.Recs))
			if t.Complete {
				st.settle = append(st.settle, settling{trace: t.ID, at: st.records, when: now})
			}
		}
		s.streams[st.id] = st
		s.order = append(s.order, st)
		spans := make([]spanItem, len(cs.Spans))
		for j, sp := range cs.Spans {
			spans[j] = spanItem{rec: sp.Rec, pe: st.probe(sp.Rec.Probe), parent: sp.Parent, hasParent: sp.HasParent, missing: sp.Missing}
		}
		s.emit(st, spans)
		st.release()
		if !st.ended {
			starts[st.id] = position{path: st.path, seq: st.seq, items: st.items}
		}
	}
	s.flushForming()
	s.o.Logf("export: resumed from %s (written %s): %d streams, %d spans to send first",
		s.o.Checkpoint, f.Written.Format(time.RFC3339), len(f.Streams), s.pending)
	return starts, nil
}
