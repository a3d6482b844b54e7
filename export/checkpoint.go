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
// same span ids; a stop (SIGTERM, Ctrl-C) re-sends nothing. Links are
// state like records: go records wait in their parent traces (Open, as
// records with writer.FlagLink), links and the roots that wait for them in
// Links, and what a trace sent in parts in Sent (links.go).
//
// Fields added later (the links, the remote parents) decode as zero from an
// older checkpoint.
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
	Links     []ckptLink      // in order of arrival
	Remotes   []writer.Remote // kept, in order of arrival
}

// ckptLink is a linkState of child trace Child.
type ckptLink struct {
	Child, Parent uint64
	Resolved      bool
	To            *ckptSpanLink
	ChildDone     bool
	Waiting       []ckptSpan
}

type ckptSpanLink struct {
	Trace        uint64
	EOI, Missing uint32
}

type ckptSent struct {
	ESS, EOI uint32
	TOut     int64
}

type ckptTrace struct {
	ID       uint64
	Recs     []writer.Record
	Complete bool
	Partial  bool
	Next     uint32
	Holes    []uint32
	// Sent: the calls sentCalls keeps, and per depth one more than the
	// highest order index it let go of (0: none).
	Sent        []ckptSent
	SentEvicted []uint32
	SentDeep    bool
}

type ckptSpan struct {
	Rec       writer.Record
	Parent    uint32
	HasParent bool
	Missing   uint32
	Link      *ckptSpanLink
}

func ckptSpanOf(sp *spanItem) ckptSpan {
	return ckptSpan{Rec: sp.rec, Parent: sp.parent, HasParent: sp.hasParent, Missing: sp.missing, Link: ckptLinkOf(sp.link)}
}

func (c *ckptSpan) item(st *stream) spanItem {
	return spanItem{rec: c.Rec, pe: st.probe(c.Rec.Probe), parent: c.Parent, hasParent: c.HasParent, missing: c.Missing, link: c.Link.link()}
}

func ckptLinkOf(l *spanLink) *ckptSpanLink {
	if l == nil {
		return nil
	}
	return &ckptSpanLink{Trace: l.trace, EOI: l.eoi, Missing: l.missing}
}

func (c *ckptSpanLink) link() *spanLink {
	if c == nil {
		return nil
	}
	return &spanLink{trace: c.Trace, eoi: c.EOI, missing: c.Missing}
}

// snapshot collects the state.
func (s *shipper) snapshot() *ckptFile {
	undelivered := map[*stream][]ckptSpan{}
	addBatch := func(b *batch) {
		for _, g := range b.groups {
			for _, sp := range g.spans {
				undelivered[g.st] = append(undelivered[g.st], ckptSpanOf(&sp))
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
	f.Stats.SpansPending, f.Stats.RecordsHeld, f.Stats.Earlier = 0, 0, nil
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
			ct := ckptTrace{ID: id, Recs: recs,
				Complete: t.complete, Partial: t.partial, Next: t.next, Holes: append([]uint32(nil), t.holes...), SentDeep: t.sent.deep}
			for d, sd := range t.sent.depths {
				for _, c := range sd.calls[:sd.n] {
					ct.Sent = append(ct.Sent, ckptSent{ESS: uint32(d), EOI: c.eoi, TOut: c.tout})
				}
				var ev uint32
				if sd.evicted {
					ev = sd.evictedMax + 1
				}
				ct.SentEvicted = append(ct.SentEvicted, ev)
			}
			cs.Open = append(cs.Open, ct)
		}
		for _, id := range st.linkOrder {
			if ls := st.links[id]; ls != nil {
				cl := ckptLink{Child: id, Parent: ls.parent, Resolved: ls.resolved, To: ckptLinkOf(ls.to), ChildDone: ls.childDone}
				for i := range ls.waiting {
					cl.Waiting = append(cl.Waiting, ckptSpanOf(&ls.waiting[i]))
				}
				cs.Links = append(cs.Links, cl)
			}
		}
		for _, id := range st.remoteOrder {
			if m := st.remotes[id]; m != nil {
				cs.Remotes = append(cs.Remotes, *m)
			}
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
				if isGo(&t.Recs[j]) {
					s.asm.goHeld++
				}
			}
			ot := &openTrace{recs: recs, since: now, complete: t.Complete, partial: t.Partial, next: t.Next, holes: t.Holes}
			ot.sent.deep = t.SentDeep
			for _, ev := range t.SentEvicted {
				ot.sent.depths = append(ot.sent.depths, sentDepth{evicted: ev > 0, evictedMax: max(ev, 1) - 1})
			}
			for _, c := range t.Sent {
				if int(c.ESS) >= len(ot.sent.depths) {
					continue
				}
				if sd := &ot.sent.depths[c.ESS]; int(sd.n) < sentKeep {
					sd.calls[sd.n] = sentCall{c.EOI, c.TOut}
					sd.n++
				}
			}
			st.traces[t.ID] = ot
			s.asm.open += int64(len(t.Recs))
			if t.Complete {
				st.settle = append(st.settle, settling{trace: t.ID, at: st.records, when: now})
			}
		}
		s.streams[st.id] = st
		s.order = append(s.order, st)
		for _, cl := range cs.Links {
			ls := &linkState{parent: cl.Parent, resolved: cl.Resolved, to: cl.To.link(), childDone: cl.ChildDone}
			for j := range cl.Waiting {
				ls.waiting = append(ls.waiting, cl.Waiting[j].item(st))
			}
			if st.links == nil {
				st.links = make(map[uint64]*linkState)
			}
			st.links[cl.Child] = ls
			st.linkOrder = append(st.linkOrder, cl.Child)
			s.asm.links++
			s.asm.waiting += int64(len(ls.waiting))
		}
		for j := range cs.Remotes {
			st.addRemote(&cs.Remotes[j])
		}
		spans := make([]spanItem, len(cs.Spans))
		for j := range cs.Spans {
			spans[j] = cs.Spans[j].item(st)
		}
		s.emit(st, spans)
		st.release()
		if !st.ended {
			starts[st.id] = position{path: st.path, seq: st.seq, items: st.items}
		}
	}
	s.flushForming()
	earlier := f.Stats
	earlier.SpansPending, earlier.RecordsHeld, earlier.Earlier = s.pending, s.asm.held(), nil
	s.stats.Earlier = &earlier
	s.o.Logf("export: resumed from %s (written %s): %d streams, %d spans to send first",
		s.o.Checkpoint, f.Written.Format(time.RFC3339), len(f.Streams), s.pending)
	return starts, nil
}
