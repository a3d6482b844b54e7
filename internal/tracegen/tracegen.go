package tracegen

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Write writes about records records to path with the synchronous writer:
// call trees of a service (a handler calling nine of twenty functions, with
// exponentially distributed durations and one error in fifty calls) mixed
// with recursions ten calls deep, over a span of about ten seconds per
// million records. The same arguments write the same file.
func Write(path string, records int) error {
	w, err := writer.NewSync(writer.Options{Path: path, Host: "bench", PID: 4242, Binary: "/srv/shop"})
	if err != nil {
		return err
	}
	names := []string{"Handle", "Find", "Save", "decode", "encode", "query", "render", "auth", "cache", "log"}
	for id := uint32(1); id <= 21; id++ {
		n := names[int(id)%len(names)] + strconv.Itoa(int(id))
		w.Define(writer.ProbeDef{ID: id, Signature: "example.com/shop/svc.(*Store)." + n + "(int) error", Package: "example.com/shop/svc", Recv: "Store", Name: n, File: "svc.go", Line: int(id) * 10})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	t := writer.Monotonic()
	for trace := uint64(1); int(trace)*10 <= records; trace++ {
		gid := trace%8 + 1
		if trace%2 == 0 { // a recursion, records at exit, deepest first
			for d := 9; d >= 0; d-- {
				w.Write(&writer.Record{Probe: 21, EOI: uint32(d), ESS: uint32(d), Trace: trace, GID: gid, TIn: t + int64(1500*d), TOut: t + 30000 - int64(1500*d)})
			}
			t += 40000
			continue
		}
		at := int64(0)
		for k := 1; k <= 9; k++ {
			p := uint32((int(trace)+k)%20 + 1)
			d := int64(rng.ExpFloat64() * float64(2000*p))
			var flags writer.Flags
			if rng.IntN(50) == 0 {
				flags = writer.FlagError
			}
			w.Write(&writer.Record{Probe: p, Flags: flags, EOI: uint32(k), ESS: 1, Trace: trace, GID: gid, TIn: t + at + 100, TOut: t + at + 100 + d})
			at += d + 200
		}
		w.Write(&writer.Record{Probe: 1, EOI: 0, ESS: 0, Trace: trace, GID: gid, TIn: t, TOut: t + at + 300})
		t += at + 1000
	}
	return w.Close()
}

// WriteJoined writes a small trace file for tests of traces that joined a
// request's trace: the probe definitions, then the remote parents (each
// before its trace's records, as the monitor writes them), then the records
// in the order given.
func WriteJoined(path string, defs []writer.ProbeDef, remotes []writer.Remote, recs []writer.Record) error {
	w, err := writer.NewSync(writer.Options{Path: path, FlushInterval: time.Hour})
	if err != nil {
		return err
	}
	for _, d := range defs {
		w.Define(d)
	}
	for _, m := range remotes {
		r := m.Record()
		w.Write(&r)
	}
	for i := range recs {
		w.Write(&recs[i])
	}
	return w.Close()
}
