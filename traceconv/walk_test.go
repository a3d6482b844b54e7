package traceconv

import (
	"errors"
	"testing"
)

// TestWalk: the test stream's three traces, with their functions and wall
// times, and the second stream's ids offset.
func TestWalk(t *testing.T) {
	dir := t.TempDir()
	a := writeStream(t, dir, 42, testProbes, testRecords)
	b := writeStream(t, dir, 43, testProbes, testRecords[:4])
	type seen struct {
		id     uint64
		stream int
		root   string
		calls  int
	}
	var got []seen
	rep, err := Walk(openTest(t, a, b), Options{}, func(tr *Tree) error {
		root := tr.Trace.Roots[0]
		if tr.Header == nil || tr.Wall(root.Record.TIn) != clockWall+root.Record.TIn {
			t.Errorf("trace %d: header %v, wall %d", tr.ID, tr.Header, tr.Wall(root.Record.TIn))
		}
		got = append(got, seen{tr.ID, tr.Stream, tr.Func(root).Signature, len(tr.Trace.Nodes)})
		return nil
	})
	if err != nil || rep.Traces != 4 || rep.Records != 11 {
		t.Fatalf("Walk: %v, report %+v", err, rep)
	}
	want := []seen{
		{1, 0, testProbes[0].Signature, 4},
		{2, 0, testProbes[0].Signature, 2},
		{3, 0, testProbes[2].Signature, 1},
		{1 + 1<<40, 1, testProbes[0].Signature, 4},
	}
	if len(got) != len(want) {
		t.Fatalf("trees %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tree %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	stop := errors.New("stop")
	if _, err := Walk(openTest(t, a), Options{}, func(*Tree) error { return stop }); err != stop {
		t.Errorf("visit's error: got %v", err)
	}
}
