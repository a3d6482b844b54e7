package writer

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// rec is a record of trace 1 on goroutine 1.
func rec(probe, eoi, ess uint32, tin, tout int64) Record {
	return Record{Probe: probe, EOI: eoi, ESS: ess, Trace: 1, GID: 1, TIn: tin, TOut: tout}
}

// shape renders a trace as "probe(incl/excl missing)" with children in brackets.
func shape(t *Trace) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		fmt.Fprintf(&b, "%d(%d/%d", n.Record.Probe, n.Inclusive, n.Exclusive)
		if n.Missing > 0 {
			fmt.Fprintf(&b, " -%d", n.Missing)
		}
		b.WriteString(")")
		if len(n.Children) > 0 {
			b.WriteString("[")
			for i, c := range n.Children {
				if i > 0 {
					b.WriteString(" ")
				}
				walk(c)
			}
			b.WriteString("]")
		}
	}
	for i, r := range t.Roots {
		if i > 0 {
			b.WriteString(" ")
		}
		walk(r)
	}
	return b.String()
}

func TestBuildTraces(t *testing.T) {
	for _, c := range []struct {
		name string
		recs []Record // in exit order, as the monitor writes them
		want string
	}{{
		name: "complete",
		recs: []Record{rec(3, 2, 2, 15, 25), rec(2, 1, 1, 10, 40), rec(4, 3, 1, 50, 90), rec(1, 0, 0, 0, 100)},
		want: "1(100/30)[2(30/20)[3(10/10)] 4(40/40)]",
	}, {
		name: "missing intermediate call",
		recs: []Record{rec(3, 2, 2, 15, 25), rec(4, 3, 1, 50, 90), rec(1, 0, 0, 0, 100)},
		want: "1(100/50)[3(10/10 -1) 4(40/40)]",
	}, {
		name: "missing root",
		recs: []Record{rec(3, 2, 2, 15, 25), rec(2, 1, 1, 10, 40), rec(4, 3, 1, 50, 90)},
		want: "2(30/20 -1)[3(10/10)] 4(40/40 -1)",
	}, {
		name: "missing parent, its earlier sibling recorded",
		// 1 calls 2 (ess 1) and then 5 (ess 1, missing), which calls 6 (ess 2).
		recs: []Record{rec(2, 1, 1, 10, 20), rec(6, 3, 2, 35, 45), rec(1, 0, 0, 0, 100)},
		want: "1(100/80)[2(10/10) 6(10/10 -1)]",
	}, {
		name: "several levels missing",
		recs: []Record{rec(9, 5, 5, 20, 30), rec(1, 0, 0, 0, 100)},
		want: "1(100/90)[9(10/10 -4)]",
	}, {
		name: "recursion depth 4",
		recs: []Record{rec(1, 3, 3, 3, 4), rec(1, 2, 2, 2, 6), rec(1, 1, 1, 1, 8), rec(1, 0, 0, 0, 10)},
		want: "1(10/3)[1(7/3)[1(4/3)[1(1/1)]]]",
	}, {
		name: "child longer than parent (clock skew) clamps exclusive at zero",
		recs: []Record{rec(2, 1, 1, 0, 50), rec(1, 0, 0, 0, 40)},
		want: "1(40/0)[2(50/50)]",
	}} {
		t.Run(c.name, func(t *testing.T) {
			traces := BuildTraces(c.recs)
			if len(traces) != 1 {
				t.Fatalf("%d traces", len(traces))
			}
			if got := shape(traces[0]); got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestBuildTracesMany(t *testing.T) {
	recs := genRecords(rand.New(rand.NewPCG(11, 12)), 10_000, 10)
	// Shuffle: the builder must not depend on input order.
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	traces := BuildTraces(recs)
	total := 0
	for i, tr := range traces {
		if i > 0 && traces[i-1].ID >= tr.ID {
			t.Fatal("traces not ordered by id")
		}
		if len(tr.Roots) != 1 {
			t.Fatalf("trace %d: %d roots", tr.ID, len(tr.Roots))
		}
		for j := range tr.Nodes {
			n := &tr.Nodes[j]
			if n.Parent != nil && n.Parent.Record.ESS != n.Record.ESS-1 {
				t.Fatalf("trace %d: parent at ess %d of ess %d", tr.ID, n.Parent.Record.ESS, n.Record.ESS)
			}
			if n.Exclusive < 0 || n.Exclusive > n.Inclusive && n.Inclusive >= 0 {
				t.Fatalf("trace %d: inclusive %v exclusive %v", tr.ID, n.Inclusive, n.Exclusive)
			}
		}
		total += len(tr.Nodes)
	}
	if total != len(recs) {
		t.Fatalf("%d nodes for %d records", total, len(recs))
	}
}

// TestTracesFromFile goes the whole way: writer, file, reader, trees.
func TestTracesFromFile(t *testing.T) {
	opt := testOptions(t)
	w, err := NewAsync(opt)
	if err != nil {
		t.Fatal(err)
	}
	w.Define(ProbeDef{ID: 1, Name: "monitoredMethod"})
	// MooBench shape: recursion depth 10, records written at exit (deepest first).
	for trace := uint64(1); trace <= 100; trace++ {
		base := int64(trace) * 1000
		for d := 9; d >= 0; d-- {
			r := Record{Probe: 1, EOI: uint32(d), ESS: uint32(d), Trace: trace, GID: 7, TIn: base + int64(d), TOut: base + 100 - int64(d)}
			w.Write(&r)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(opt.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b TraceBuilder
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind == KindRecord {
			b.Add(&it.Record)
		}
	}
	traces := b.Traces()
	if len(traces) != 100 {
		t.Fatalf("%d traces", len(traces))
	}
	for _, tr := range traces {
		depth := 0
		for n := tr.Roots[0]; ; n = n.Children[0] {
			depth++
			if want := time.Duration(2); len(n.Children) == 1 && n.Exclusive != want {
				t.Fatalf("exclusive %v, want %v", n.Exclusive, want)
			}
			if len(n.Children) == 0 {
				break
			}
		}
		if depth != 10 {
			t.Fatalf("trace %d: depth %d", tr.ID, depth)
		}
	}
}
