package writer

import (
	"bytes"
	"slices"
	"testing"
)

// TestUnfinishedRoundTrip: both writers carry an unfinished record (flag bit
// 3, through the flags byte) and the calls Lose counts (a loss record of
// reason LossUnfinished) into the file; the reader counts the unfinished
// records and the trace builder keeps them apart.
func TestUnfinishedRoundTrip(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			w.Define(ProbeDef{ID: 1, Name: "f"})
			recs := []Record{
				{Probe: 1, EOI: 1, ESS: 1, Trace: 9, GID: 3, TIn: 200, TOut: 300},
				{Probe: 1, Flags: FlagUnfinished, EOI: 0, ESS: 0, Trace: 9, GID: 3, TIn: 100, TOut: 900},
			}
			for i := range recs {
				w.Write(&recs[i])
			}
			w.(interface{ Lose(Loss) }).Lose(Loss{Count: 3, From: 900, To: 900, Reason: LossUnfinished})
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, opt.Path)
			if got.err != nil || len(got.gaps) != 0 {
				t.Fatalf("err %v, gaps %v", got.err, got.gaps)
			}
			if h := got.headers[0]; h.Major != 1 || h.Minor != 5 {
				t.Errorf("format %d.%d, want 1.5", h.Major, h.Minor)
			}
			sameRecords(t, got.records, recs)
			if len(got.losses) != 1 || got.losses[0] != (Loss{Count: 3, From: 900, To: 900, Reason: LossUnfinished}) {
				t.Errorf("losses %+v, want 3 unfinished at 900", got.losses)
			}
			if got.stats.Unfinished != 1 {
				t.Errorf("ReadStats.Unfinished %d, want 1", got.stats.Unfinished)
			}
			tr := BuildTraces(got.records)
			if len(tr) != 1 || len(tr[0].Roots) != 1 || !tr[0].Roots[0].Record.Unfinished() || tr[0].Nodes[1].Record.Unfinished() {
				t.Errorf("trees: %+v", tr)
			}
		})
	}
}

// TestUnfinishedReadByOlderReaders: a reader of format 1.4 decodes the
// flags byte whole, so it reads an unfinished record as a record, with the
// flag it does not know, and skips nothing.
func TestUnfinishedReadByOlderReaders(t *testing.T) {
	e := newEncoder(256)
	r := Record{Probe: 1, Flags: FlagUnfinished | FlagError, Trace: 5, GID: 18, TIn: 10, TOut: 50}
	e.record(&r)
	b := slices.Clone(e.buf[chunkHeaderLen:])
	if b[0]&evXFlags == 0 {
		t.Fatalf("head %#x: the flag must travel in the flags byte (X), where 1.4 readers keep it", b[0])
	}
	got := readAll(NewReader(bytes.NewReader(append(fileMagic[:], chunkOf(b)...))))
	if len(got.gaps) != 0 || got.stats.Unknown != 0 {
		t.Fatalf("gaps %v, unknown %d", got.gaps, got.stats.Unknown)
	}
	sameRecords(t, got.records, []Record{r})
}
