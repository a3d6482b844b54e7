package integration

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// TestGoroutineTracesLinked builds the shop program through tigris go and runs
// it in fine mode: shop.Spawn starts three goroutines with a go statement of a
// function literal, and each goroutine's trace (Fib) is linked to main's trace
// at the Spawn call that ran the go statement. tigris read prints the links.
func TestGoroutineTracesLinked(t *testing.T) {
	dir := itest.NewModule(t, itest.ShopFiles)
	inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
	out := filepath.Join(dir, "links.tgr")
	if got := itest.RunProgram(t, inst, "TIGRIS_MODE=fine", "TIGRIS_OUT="+out); got != itest.ShopOutput {
		t.Fatalf("output\n%s\nwant (as the plain build)\n%s", got, itest.ShopOutput)
	}

	r, err := writer.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b writer.TraceBuilder
	var links []writer.Link
	var spawn, fib uint32
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindProbe:
			switch it.Probe.Name {
			case "Spawn":
				spawn = it.Probe.ID
			case "Fib":
				fib = it.Probe.ID
			}
		case writer.KindRecord:
			b.Add(&it.Record)
		case writer.KindLink:
			links = append(links, it.Link)
			b.AddLink(&it.Link)
		}
	}
	traces := map[uint64]*writer.Trace{}
	for _, tr := range b.Traces() {
		traces[tr.ID] = tr
	}
	if len(links) != 3 || len(traces) != 4 {
		t.Fatalf("%d links and %d traces; want 3 links, one per goroutine Spawn started, and 4 traces", len(links), len(traces))
	}
	for _, l := range links {
		child, parent := traces[l.Trace], traces[l.Parent]
		if child == nil || parent == nil || child.Link == nil || *child.Link != l {
			t.Fatalf("link %+v: child trace %v, parent trace %v", l, child, parent)
		}
		if len(child.Roots) != 1 || child.Roots[0].Record.Probe != fib || child.Roots[0].Record.GID != l.GID {
			t.Errorf("linked trace %d: roots %d, want one call of Fib on goroutine %d", l.Trace, len(child.Roots), l.GID)
		}
		if l.Probe != spawn || l.ParentGID == l.GID || parent.Roots[0].Record.GID != l.ParentGID {
			t.Errorf("link %+v: want the go statement in Spawn (probe %d) on main's goroutine %d", l, spawn, parent.Roots[0].Record.GID)
		}
		from := parent.LinkedFrom(&l)
		if from == nil || from.Record.Probe != spawn {
			t.Errorf("link %+v: linked from %+v, want the Spawn call", l, from)
		} else if from.Record.TIn > l.Time || child.Roots[0].Record.TIn < l.Time {
			t.Errorf("go statement at %d: Spawn began at %d, the child's call at %d", l.Time, from.Record.TIn, child.Roots[0].Record.TIn)
		}
	}

	read := itest.Tigris(t, dir, nil, "read", out)
	if n := strings.Count(read, "\nlink    "); n != 3 || !strings.Contains(read, " in example.com/itest/shop.Spawn(int, int) int at ") {
		t.Errorf("tigris read shows %d links:\n%s", n, read)
	}

	// Coarse mode: no trace, no link.
	coarse := filepath.Join(dir, "coarse.tgr")
	itest.RunProgram(t, inst, "TIGRIS_MODE=coarse", "TIGRIS_OUT="+coarse)
	if itest.FileExists(coarse) {
		t.Error("coarse mode wrote a trace file")
	}
}
