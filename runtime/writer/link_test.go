package writer

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLinkRoundTrip writes links between records through both writers: each
// link comes back as a link item, in place and field for field, the records
// around it are untouched (a link leaves the event records' delta state
// alone), and no record is read with FlagLink.
func TestLinkRoundTrip(t *testing.T) {
	links := []Link{
		{Trace: 2, GID: 9, Parent: 1, ParentGID: 1, EOI: 3, ESS: 2, Probe: 4, Time: 1_000_000_123},
		{Trace: math.MaxUint64, GID: math.MaxUint64, Parent: math.MaxUint64 - 1, ParentGID: math.MaxUint64,
			EOI: math.MaxUint32, ESS: math.MaxUint32, Probe: math.MaxUint32, Time: math.MinInt64},
		{Trace: 7, GID: 20, Time: math.MaxInt64}, // a link without a known parent position
	}
	var items []Record
	for i := range links {
		items = append(items, links[i].Record())
	}
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			got := writeAmongRecords(t, wr.new, items)
			if !slices.Equal(got.links, links) || got.stats.Links != int64(len(links)) {
				t.Fatalf("links: got %+v (stats %d), want %+v", got.links, got.stats.Links, links)
			}
		})
	}
}

// writeAmongRecords writes items (links, remote parents) among 300 records
// through the writer that newOut makes, one every 100 records, reads the
// file back, and checks that it is whole and that the records are read
// unchanged, none with the flag of an item.
func writeAmongRecords(t *testing.T, newOut constructor, items []Record) read {
	t.Helper()
	opt := testOptions(t)
	opt.OnFull = Block
	opt.ChunkBytes = 512
	w, err := newOut(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range testProbes(10) {
		w.Define(d)
	}
	recs := genRecords(rand.New(rand.NewPCG(5, 6)), 100*len(items), 10)
	for i := range recs {
		if i%100 == 50 {
			w.Write(&items[i/100])
		}
		w.Write(&recs[i])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, opt.Path)
	if got.err != nil || len(got.gaps) != 0 {
		t.Fatalf("err %v, gaps %v", got.err, got.gaps)
	}
	sameRecords(t, got.records, recs)
	for _, r := range got.records {
		if r.Flags&(FlagLink|FlagRemote) != 0 {
			t.Fatalf("a record was read with the flag of an item: %+v", r)
		}
	}
	return got
}

// TestLinkItemBytes pins the link item's encoding, byte for byte, to the one
// docs/trace-format.md gives: a framed item (kind 0x04, uvarint length), so
// that a 1.0 or 1.1 reader skips it by its length.
func TestLinkItemBytes(t *testing.T) {
	l := Link{Trace: 5, GID: 18, Parent: 3, ParentGID: 1, EOI: 2, ESS: 1, Probe: 7, Time: 5_000_100}
	e := newEncoder(256)
	r := l.Record()
	e.record(&r)
	want := []byte{0x04, 0x0b, 0x05, 0x12, 0x03, 0x01, 0x02, 0x01, 0x07, 0xc8, 0xae, 0xe2, 0x04}
	if got := e.buf[chunkHeaderLen:]; !bytes.Equal(got, want) {
		t.Fatalf("link item % x, want % x", got, want)
	}
	// Trailing fields of a later minor version are ignored.
	body := append(slices.Clone(want[2:]), 0x7f, 0x01)
	payload := append([]byte{wireLink}, binary.AppendUvarint(nil, uint64(len(body)))...)
	payload = append(payload, body...)
	got := readBytes(append(fileMagic[:], chunkOf(payload)...))
	if len(got.links) != 1 || got.links[0] != l || len(got.gaps) != 0 {
		t.Fatalf("read %+v, gaps %v; want %+v", got.links, got.gaps, l)
	}
	// A body cut short is damage: the rest of the chunk is a gap.
	got = readBytes(append(fileMagic[:], chunkOf([]byte{wireLink, 2, 0x05, 0x12})...))
	if len(got.links) != 0 || len(got.gaps) != 1 {
		t.Fatalf("short link body: links %+v, gaps %v", got.links, got.gaps)
	}
}

// TestEventFlagsNeverLink: an event record whose full flags byte has bit 7
// or bit 6 set (no writer makes one) is read as a call, not as a link or a
// remote parent.
func TestEventFlagsNeverLink(t *testing.T) {
	e := newEncoder(256)
	r := Record{Probe: 1, Flags: FlagError | 1<<5, EOI: 1, TIn: 10, TOut: 20}
	e.record(&r)
	b := slices.Clone(e.buf[chunkHeaderLen:])
	b[2] |= byte(FlagLink | FlagRemote) // head, probe id, flags byte
	got := readBytes(append(fileMagic[:], chunkOf(b)...))
	if len(got.records) != 1 || got.records[0].Flags&(FlagLink|FlagRemote) != 0 || got.records[0].Flags != r.Flags {
		t.Fatalf("records %+v", got.records)
	}
}

// TestLinkedFrom builds a parent trace and finds the call that ran a go
// statement from a link's position: the innermost call open at the go
// statement, passing over a deeper sibling that had returned and calls that
// started after it.
func TestLinkedFrom(t *testing.T) {
	// main (eoi 0) → handle (eoi 1) → query (eoi 2, returned at 40);
	// handle's go statement at 50, after query; then save (eoi 3).
	parent := []Record{
		{Probe: 1, Trace: 1, EOI: 0, ESS: 0, GID: 1, TIn: 0, TOut: 100},
		{Probe: 2, Trace: 1, EOI: 1, ESS: 1, GID: 1, TIn: 10, TOut: 90},
		{Probe: 3, Trace: 1, EOI: 2, ESS: 2, GID: 1, TIn: 20, TOut: 40},
		{Probe: 4, Trace: 1, EOI: 3, ESS: 2, GID: 1, TIn: 60, TOut: 70},
	}
	child := []Record{{Probe: 5, Trace: 2, EOI: 0, ESS: 0, GID: 7, TIn: 55, TOut: 80}}
	l := Link{Trace: 2, GID: 7, Parent: 1, ParentGID: 1, EOI: 3, ESS: 2, Probe: 2, Time: 50}
	var b TraceBuilder
	for i := range parent {
		b.Add(&parent[i])
	}
	b.AddLink(&l)
	b.Add(&child[0])
	ts := b.Traces()
	if len(ts) != 2 || ts[0].Link != nil || ts[1].Link == nil || *ts[1].Link != l {
		t.Fatalf("traces %d, links %v %v", len(ts), ts[0].Link, ts[1].Link)
	}
	n := ts[0].LinkedFrom(ts[1].Link)
	if n == nil || n.Record.EOI != 1 {
		t.Fatalf("linked from %+v, want handle (eoi 1)", n)
	}
	// The same go statement with handle unrecorded: main is the closest
	// recorded call.
	ts = BuildTraces([]Record{parent[0], parent[2], parent[3]})
	if n := ts[0].LinkedFrom(&l); n == nil || n.Record.EOI != 0 {
		t.Fatalf("without handle: linked from %+v, want main (eoi 0)", n)
	}
}
