package tracegen

import (
	"encoding/binary"
	"math/rand/v2"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Rings is a run of a service whose requests joined request traces, laid
// out in a file as the asynchronous writer lays it out: each P has a ring;
// a goroutine writes a trace's remote parent into the ring of the P it runs
// on when the trace's root starts and each record into the ring of the P it
// runs on when the call returns, and it changes P now and then; every drain
// pass writes the rings one after another. So a record written on a ring
// drained before the remote parent's reaches the file first.
type Rings struct {
	Defs []writer.ProbeDef
	// Chunks are the items of each ring of each pass, in file order:
	// records, and remote parents packed by writer.Remote.Record.
	Chunks [][]writer.Record
	// IDs are the W3C trace ids the joined traces joined (the odd ones),
	// Records the number of records of each trace.
	IDs     map[uint64][16]byte
	Records map[uint64]int
	// Early counts the records that come in the file before their trace's
	// remote parent, EarlyTraces the traces that have some.
	Early, EarlyTraces int
}

// Concurrent makes the Rings of traces requests served by goroutines
// goroutines at once on ps Ps: each trace is a handler (probe 1) that calls
// Find (probe 2) three times; a pass drains the rings every 10 items per goroutine (the writer's goroutine wakes when a ring fills a quarter). The
// same arguments make the same Rings.
func Concurrent(traces, goroutines, ps int, seed uint64) *Rings {
	rng := rand.New(rand.NewPCG(seed, 44))
	rs := &Rings{
		Defs: []writer.ProbeDef{
			{ID: 1, Package: "example.com/shop", Recv: "Server", Name: "ServeHTTP", Signature: "example.com/shop.(*Server).ServeHTTP(net/http.ResponseWriter, *net/http.Request)"},
			{ID: 2, Package: "example.com/shop", Recv: "Store", Name: "Find", Signature: "example.com/shop.(*Store).Find(int) error"},
		},
		IDs: map[uint64][16]byte{}, Records: map[uint64]int{},
	}
	// One goroutine's request: the items it writes, in order.
	type request struct {
		trace uint64
		gid   uint64
		items []writer.Record
		p     int
	}
	rings := make([][]writer.Record, ps)
	pass := func() {
		for i, ring := range rings {
			if len(ring) > 0 {
				rs.Chunks = append(rs.Chunks, ring)
				rings[i] = nil
			}
		}
	}
	newRequest := func(trace uint64, gid uint64) *request {
		q := &request{trace: trace, gid: gid, p: rng.IntN(ps)}
		t := int64(trace) * 1000
		if trace%2 == 1 {
			var id [16]byte
			binary.BigEndian.PutUint64(id[:8], 0x4bf92f3577b34da6)
			binary.BigEndian.PutUint64(id[8:], trace)
			rs.IDs[trace] = id
			m := writer.Remote{Trace: trace, GID: gid, TraceID: id, SpanID: [8]byte{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, Flags: 1, Time: t}
			q.items = append(q.items, m.Record())
		}
		for k := uint32(1); k <= 3; k++ {
			q.items = append(q.items, writer.Record{Probe: 2, Trace: trace, GID: gid, EOI: k, ESS: 1, TIn: t + int64(k)*100, TOut: t + int64(k)*100 + 50})
		}
		q.items = append(q.items, writer.Record{Probe: 1, Trace: trace, GID: gid, TIn: t, TOut: t + 900})
		rs.Records[trace] = 4
		return q
	}
	running := make([]*request, 0, goroutines)
	next := uint64(1)
	for ; next <= uint64(min(traces, goroutines)); next++ {
		running = append(running, newRequest(next, next))
	}
	for n := 1; len(running) > 0; n++ {
		i := rng.IntN(len(running))
		q := running[i]
		if rng.IntN(3) == 0 {
			q.p = rng.IntN(ps) // the goroutine moved to another P
		}
		rings[q.p] = append(rings[q.p], q.items[0])
		q.items = q.items[1:]
		if len(q.items) == 0 {
			if next <= uint64(traces) {
				running[i] = newRequest(next, q.gid)
				next++
			} else {
				running = append(running[:i], running[i+1:]...)
			}
		}
		if n%(10*goroutines) == 0 {
			pass()
		}
	}
	pass()
	rs.count()
	return rs
}

// DelayRemote moves the remote parent of trace to a chunk of its own at
// the end of the file, after every record: a ring the writer drained last.
func (rs *Rings) DelayRemote(trace uint64) {
	for i, c := range rs.Chunks {
		for j, r := range c {
			if r.Trace == trace && r.Flags&writer.FlagRemote != 0 {
				rs.Chunks[i] = append(c[:j:j], c[j+1:]...)
				rs.Chunks = append(rs.Chunks, []writer.Record{r})
				rs.count()
				return
			}
		}
	}
}

// count counts Early and EarlyTraces.
func (rs *Rings) count() {
	rs.Early, rs.EarlyTraces = 0, 0
	remote := map[uint64]bool{}
	early := map[uint64]bool{}
	for _, c := range rs.Chunks {
		for _, r := range c {
			if m, ok := r.Remote(); ok {
				remote[m.Trace] = true
			} else if _, joined := rs.IDs[r.Trace]; joined && !remote[r.Trace] {
				rs.Early++
				early[r.Trace] = true
			}
		}
	}
	rs.EarlyTraces = len(early)
}

// Write writes the Rings to path with the writer's own encoder (the
// synchronous writer): the probe definitions, then each ring's items as a
// chunk of its own.
func (rs *Rings) Write(path string) error {
	w, err := writer.NewSync(writer.Options{Path: path, FlushInterval: time.Hour})
	if err != nil {
		return err
	}
	for _, d := range rs.Defs {
		w.Define(d)
	}
	for _, c := range rs.Chunks {
		for i := range c {
			w.Write(&c[i])
		}
		if err := w.Flush(); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}
