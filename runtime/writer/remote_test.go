package writer

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// w3cRemote is the example of the W3C Trace Context specification.
var w3cRemote = Remote{
	Trace: 5, GID: 18,
	TraceID: [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:  [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	Flags:   1, Time: 5_000_100,
}

// TestRemoteRoundTrip writes remote parents between records through both
// writers: each comes back as a remote item, in place and field for field
// (times converted like a record's), the records around it are untouched,
// and no record is read with FlagRemote.
func TestRemoteRoundTrip(t *testing.T) {
	remotes := []Remote{
		w3cRemote,
		{Trace: math.MaxUint64, GID: math.MaxUint64, Flags: 0xff, Time: math.MinInt64,
			TraceID: [16]byte{0: 0xff, 15: 0xff}, SpanID: [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{Trace: 7, GID: 20, TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 1}, Time: math.MaxInt64},
	}
	var items []Record
	for i := range remotes {
		items = append(items, remotes[i].Record())
	}
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			got := writeAmongRecords(t, wr.new, items)
			if !slices.Equal(got.remotes, remotes) || got.stats.Remotes != int64(len(remotes)) {
				t.Fatalf("remotes: got %+v (stats %d), want %+v", got.remotes, got.stats.Remotes, remotes)
			}
		})
	}
}

// TestRemoteItemBytes pins the remote-parent item's encoding, byte for byte,
// to the one docs/trace-format.md gives: a framed item (kind 0x05, uvarint
// length), so that a reader of 1.3 or before skips it by its length.
func TestRemoteItemBytes(t *testing.T) {
	e := newEncoder(256)
	r := w3cRemote.Record()
	e.record(&r)
	want := []byte{0x05, 0x1f, 0x05, 0x12,
		0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36,
		0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7,
		0x01, 0xc8, 0xae, 0xe2, 0x04}
	if got := e.buf[chunkHeaderLen:]; !bytes.Equal(got, want) {
		t.Fatalf("remote item % x, want % x", got, want)
	}
	// Trailing fields of a later minor version are ignored.
	body := append(slices.Clone(want[2:]), 0x7f, 0x01)
	payload := append([]byte{wireRemote}, binary.AppendUvarint(nil, uint64(len(body)))...)
	payload = append(payload, body...)
	got := readBytes(append(fileMagic[:], chunkOf(payload)...))
	if len(got.remotes) != 1 || got.remotes[0] != w3cRemote || len(got.gaps) != 0 {
		t.Fatalf("read %+v, gaps %v; want %+v", got.remotes, got.gaps, w3cRemote)
	}
	// A body cut short is damage: the rest of the chunk is a gap.
	got = readBytes(append(fileMagic[:], chunkOf(want[:20])...))
	if len(got.remotes) != 0 || len(got.gaps) != 1 {
		t.Fatalf("short remote body: remotes %+v, gaps %v", got.remotes, got.gaps)
	}
}

// TestRemoteUnknownToOlderReaders: a remote item in a file is skipped, by its
// length, by a reader that does not know its kind (as a 1.3 reader does):
// every record around it is read.
func TestRemoteUnknownToOlderReaders(t *testing.T) {
	e := newEncoder(256)
	calls := []Record{{Probe: 1, EOI: 0, Trace: 5, GID: 18, TIn: 10, TOut: 50}, {Probe: 1, EOI: 1, ESS: 1, Trace: 5, GID: 18, TIn: 20, TOut: 30}}
	r := w3cRemote.Record()
	e.record(&calls[1])
	e.record(&r)
	e.record(&calls[0])
	b := slices.Clone(e.buf[chunkHeaderLen:])
	i := bytes.IndexByte(b, wireRemote)
	b[i] = 0x7e // a kind this reader does not know
	got := readBytes(append(fileMagic[:], chunkOf(b)...))
	if len(got.remotes) != 0 || got.stats.Unknown != 1 || len(got.gaps) != 0 {
		t.Fatalf("remotes %+v, unknown %d, gaps %v", got.remotes, got.stats.Unknown, got.gaps)
	}
	sameRecords(t, got.records, []Record{calls[1], calls[0]})
}

// TestTraceRemote: the trace builder gives a trace the remote parent added
// for it, and only that trace.
func TestTraceRemote(t *testing.T) {
	var b TraceBuilder
	b.AddRemote(&w3cRemote)
	b.Add(&Record{Probe: 1, Trace: 5, GID: 18, TIn: 10, TOut: 20})
	b.Add(&Record{Probe: 1, Trace: 6, GID: 18, TIn: 30, TOut: 40})
	ts := b.Traces()
	if len(ts) != 2 || ts[0].Remote == nil || *ts[0].Remote != w3cRemote || ts[1].Remote != nil {
		t.Fatalf("traces %d: remotes %v %v", len(ts), ts[0].Remote, ts[1].Remote)
	}
	if !w3cRemote.Sampled() || (&Remote{Flags: 2}).Sampled() {
		t.Fatal("Sampled reads bit 0 of the flags")
	}
}
