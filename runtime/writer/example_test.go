package writer_test

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Write two calls of one trace, read them back and rebuild the call tree.
func Example() {
	dir, err := os.MkdirTemp("", "tigris-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.tgr")

	w, err := writer.NewAsync(writer.Options{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Name: "Handle"})
	w.Define(writer.ProbeDef{ID: 2, Name: "Find"})
	t0 := writer.Monotonic()
	// Records are written at exit: the inner call first.
	w.Write(&writer.Record{Probe: 2, EOI: 1, ESS: 1, Trace: 7, GID: 1, TIn: t0 + 100, TOut: t0 + 400, Flags: writer.FlagError})
	w.Write(&writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 7, GID: 1, TIn: t0, TOut: t0 + 1000})
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := writer.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var b writer.TraceBuilder
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if it.Kind == writer.KindRecord {
			b.Add(&it.Record)
		}
	}
	for _, t := range b.Traces() {
		var show func(n *writer.Node, indent string)
		show = func(n *writer.Node, indent string) {
			fmt.Printf("%s%s inclusive %v exclusive %v error=%v\n", indent, r.Probe(n.Record.Probe).Name,
				n.Inclusive, n.Exclusive, n.Record.Flags&writer.FlagError != 0)
			for _, c := range n.Children {
				show(c, indent+"  ")
			}
		}
		fmt.Println("trace", t.ID)
		for _, root := range t.Roots {
			show(root, "  ")
		}
	}
	// Output:
	// trace 7
	//   Handle inclusive 1µs exclusive 700ns error=false
	//     Find inclusive 300ns exclusive 300ns error=true
}
