package traceconv_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tigrisgo/tigris/runtime/writer"
	"github.com/tigrisgo/tigris/traceconv"
)

// Write a two-call trace, then summarize it per function and convert it to a
// pprof profile.
func Example() {
	dir, err := os.MkdirTemp("", "traceconv-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "app.tgr")

	w, err := writer.NewSync(writer.Options{Path: path})
	if err != nil {
		log.Fatal(err)
	}
	w.Define(writer.ProbeDef{ID: 1, Signature: "main.handle()", Name: "handle"})
	w.Define(writer.ProbeDef{ID: 2, Signature: "main.find(int) error", Name: "find"})
	t0 := writer.Monotonic()
	w.Write(&writer.Record{Probe: 2, EOI: 1, ESS: 1, Trace: 1, GID: 1, TIn: t0 + 100, TOut: t0 + 400, Flags: writer.FlagError})
	w.Write(&writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: 1, GID: 1, TIn: t0, TOut: t0 + 1000})
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, _, err := traceconv.Open([]string{path})
	if err != nil {
		log.Fatal(err)
	}
	stats, _, err := traceconv.Summarize(r, traceconv.Options{})
	r.Close()
	if err != nil {
		log.Fatal(err)
	}
	traceconv.SortStats(stats, "self")
	for _, f := range stats {
		fmt.Printf("%s: %d call(s), %d error(s), inclusive %v, exclusive %v\n",
			f.Signature, f.Calls, f.Errors, f.Inclusive.Total, f.Exclusive.Total)
	}

	r, _, err = traceconv.Open([]string{path})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	out, err := os.Create(traceconv.Pprof.DefaultOutput(path))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	rep, err := traceconv.Pprof.Convert(out, r, traceconv.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d records, %d call tree(s), %d warning(s)\n",
		filepath.Base(out.Name()), rep.Records, rep.Traces, len(rep.Warnings()))
	// Output:
	// main.handle(): 1 call(s), 0 error(s), inclusive 1µs, exclusive 700ns
	// main.find(int) error: 1 call(s), 1 error(s), inclusive 300ns, exclusive 300ns
	// app.pb.gz: 2 records, 1 call tree(s), 0 warning(s)
}
