package export

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Options configure Run. The zero value of each field but Traces or Admin,
// and Endpoint, is a documented default.
type Options struct {
	// Traces are the trace files to follow: files, directories (their *.tgr
	// files) or globs. Files appear and rotate while the shipper runs.
	Traces []string
	// Admin is the admin endpoint of the program (host:port or URL) whose
	// coarse statistics become metrics; "" sends no metrics.
	Admin, AdminToken string
	// Endpoint is the OTLP/HTTP base URL ("http://127.0.0.1:4318"): spans go
	// to Endpoint/v1/traces, metrics to Endpoint/v1/metrics. TracesURL and
	// MetricsURL, when set, are used as they are instead.
	Endpoint, TracesURL, MetricsURL string
	// Headers are added to every request (authentication, tenant ids).
	Headers map[string]string
	// Gzip compresses request bodies.
	Gzip bool

	// ServiceName and InstanceID set service.name and service.instance.id;
	// by default the binary's base name, and a UUID of host and process id.
	// Attributes are more resource attributes (OTEL_RESOURCE_ATTRIBUTES).
	ServiceName, InstanceID string
	Attributes              map[string]string

	// Checkpoint is the file that keeps the position and what is not yet
	// delivered across restarts; "" keeps nothing (a restart sends
	// everything again).
	Checkpoint string
	// CheckpointEvery is how often the checkpoint is written while spans are
	// being delivered. Default 1s.
	CheckpointEvery time.Duration
	// Once reads the files to their end, sends everything and returns,
	// instead of following them.
	Once bool

	// BatchSpans is the most spans in one request (default 8192); BatchWait
	// how long a span waits for its batch to fill (default 200ms).
	BatchSpans int
	BatchWait  time.Duration
	// Workers is the number of requests in flight at once (default 2).
	Workers int
	// Timeout bounds one request (default 10s). RetryFor is how long a batch
	// is retried before it is counted as not delivered; 0 (the default)
	// retries until the shipper stops, since the trace files hold the data
	// meanwhile and reading waits (see MaxMemory).
	Timeout, RetryFor time.Duration
	// BackoffMin and BackoffMax bound the wait between retries (default
	// 250ms and 5s; doubled after each failure, ±25% jitter).
	BackoffMin, BackoffMax time.Duration
	// MaxMemory bounds what the shipper holds: records of open traces, spans
	// not yet delivered, request bodies. Reading stops while it is reached
	// and resumes as spans are delivered. Default 64 MiB.
	MaxMemory int64
	// Hold is how long the records of a trace whose root has not returned
	// are held before they are sent in parts (default 5s). Settle is how long
	// a complete trace waits for records the writer wrote late (default 2s,
	// or 65536 later records, whichever comes first).
	Hold, Settle time.Duration
	// MetricsEvery is the admin endpoint's polling interval (default 10s).
	MetricsEvery time.Duration
	// Poll is how often files are looked for and a file's end is re-read
	// (default 200ms).
	Poll time.Duration

	// Transport, when set, carries the requests instead of an HTTP transport
	// of the shipper's own (tests, benchmarks, a caller's proxy settings).
	Transport http.RoundTripper

	// Version is the tigris version, the instrumentation scope's version.
	Version string
	// Logf receives progress and problems, one line each; nil discards.
	Logf func(format string, args ...any)
	// OnStats, when set, is called with the counters every second and at the end.
	OnStats func(Stats)
}

// MemoryLimit is a Go memory limit (debug.SetMemoryLimit) for a process
// that runs the shipper alone: what it holds is bounded by maxMemory (see
// Options.MaxMemory; 0 for the default), and the limit keeps the heap's
// garbage from doubling that.
func MemoryLimit(maxMemory int64) int64 {
	if maxMemory <= 0 {
		maxMemory = 64 << 20
	}
	return 2*maxMemory + 32<<20
}

// Stats are the shipper's counters since its checkpoint was created: they
// include what earlier runs on the checkpoint counted (Earlier says how much).
// Every record read is a span sent, not delivered, pending or held:
// Records = SpansSent + SpansFailed + SpansPending + RecordsHeld.
type Stats struct {
	Records      int64 // records read from trace files
	SpansSent    int64 // spans the receiver accepted
	SpansFailed  int64 // spans not delivered: refused, or given up (RetryFor)
	SpansPending int64 // spans made and not yet delivered
	// RecordsHeld are records read that are no span yet: in traces whose
	// root call has not returned (sent in parts after Hold), in complete
	// traces still settling, or roots waiting for their goroutine's link.
	// The checkpoint keeps them for the next run.
	RecordsHeld   int64
	Requests      int64  // trace requests that succeeded
	Retries       int64  // attempts after a failed one (traces and metrics)
	TracesSplit   int64  // open traces sent in parts (memory or Hold)
	LateRecords   int64  // records that came after their trace was sent (no parent)
	WriterLost    uint64 // records the program's writer reported lost (not the shipper's)
	Gaps          int64  // damaged stretches of trace files skipped
	Streams       int    // streams followed
	Ended         int    // streams read to their end (the process is gone)
	MetricPolls   int64  // admin endpoint polls that became metric requests
	MetricsSent   int64  // metric requests accepted
	MetricsFailed int64  // metric requests not delivered (superseded or refused)
	PollErrors    int64  // admin endpoint polls that failed

	// Links are the link items read: goroutines a go statement of a recorded
	// trace started. LinksDropped went without a span link: the child trace
	// was sent before its link came, its records never came, or more links
	// were pending than the bound. LinksUnresolved have no call to point at:
	// the go statement's callers have no record, or were sent and forgotten.
	Links, LinksDropped, LinksUnresolved int64

	// LateRemotes are remote parents read after spans of their trace were
	// sent (remote.go): the writer's per-P queues put them further behind
	// the trace's records than the settling window; those spans carry
	// tigris's trace id, not the request's.
	LateRemotes int64

	// Earlier are the counters the checkpoint held when this run began:
	// what the runs before this one did. Its SpansPending and RecordsHeld are
	// what they left for this run to send (spans made, records held). nil
	// for a run without a checkpoint, or with a new one.
	Earlier *Stats
}

// ThisRun returns what this run did: s less Earlier. The current state
// (Streams, Ended, SpansPending, RecordsHeld) is as it is, and Earlier
// stays, for what it carried in. For this run alone,
// Records + Earlier.SpansPending + Earlier.RecordsHeld =
// SpansSent + SpansFailed + SpansPending + RecordsHeld.
func (s Stats) ThisRun() Stats {
	e := s.Earlier
	if e == nil {
		return s
	}
	s.Records -= e.Records
	s.SpansSent -= e.SpansSent
	s.SpansFailed -= e.SpansFailed
	s.Requests -= e.Requests
	s.Retries -= e.Retries
	s.TracesSplit -= e.TracesSplit
	s.LateRecords -= e.LateRecords
	s.WriterLost -= e.WriterLost
	s.Gaps -= e.Gaps
	s.MetricPolls -= e.MetricPolls
	s.MetricsSent -= e.MetricsSent
	s.MetricsFailed -= e.MetricsFailed
	s.PollErrors -= e.PollErrors
	s.Links -= e.Links
	s.LinksDropped -= e.LinksDropped
	s.LinksUnresolved -= e.LinksUnresolved
	s.LateRemotes -= e.LateRemotes
	return s
}

const (
	recordCost = 72 // bytes a held record or a pending span costs, roughly
	spanBytes  = 320
	// linkBound: at most one link pending per this many bytes of MaxMemory,
	// so links and the roots that wait for them take a small part of it.
	linkBound = 4096
)

func (o *Options) defaults() error {
	if len(o.Traces) == 0 && o.Admin == "" {
		return errors.New("export: nothing to export: give trace files or an admin endpoint")
	}
	if o.Endpoint == "" && (o.TracesURL == "" && len(o.Traces) > 0 || o.MetricsURL == "" && o.Admin != "") {
		return errors.New("export: no OTLP endpoint")
	}
	base := strings.TrimSuffix(o.Endpoint, "/")
	if o.TracesURL == "" {
		o.TracesURL = base + "/v1/traces"
	}
	if o.MetricsURL == "" {
		o.MetricsURL = base + "/v1/metrics"
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.CheckpointEvery, time.Second)
	set(&o.BatchWait, 200*time.Millisecond)
	set(&o.Timeout, 10*time.Second)
	set(&o.BackoffMin, 250*time.Millisecond)
	set(&o.BackoffMax, 5*time.Second)
	set(&o.Hold, 5*time.Second)
	set(&o.Settle, 2*time.Second)
	set(&o.MetricsEvery, 10*time.Second)
	set(&o.Poll, 200*time.Millisecond)
	if o.BatchSpans <= 0 {
		o.BatchSpans = 8192
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = 64 << 20
	}
	if o.MaxMemory < 4<<20 {
		return fmt.Errorf("export: max memory %d bytes is below the minimum of 4 MiB", o.MaxMemory)
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return nil
}

// batch is a request's worth of spans, grouped by stream.
type batch struct {
	groups []group
	n      int
	first  time.Time
}

type group struct {
	st    *stream
	spans []spanItem
}

// result is a worker's report on a batch.
type result struct {
	b        *batch
	o        outcome
	rejected int64
	err      error
}

// shipper is the state of one Run; its loop owns everything but the workers'
// posters and the metrics poller.
type shipper struct {
	o       Options
	host    string
	asm     assembler
	streams map[uint64]*stream
	order   []*stream
	stats   Stats

	forming  *batch
	ready    []*batch
	inflight map[*batch]bool
	pending  int64 // spans in forming, ready and in-flight batches

	reads      chan *readBatch
	results    chan result
	work       chan *batch
	stopWork   chan struct{}
	followCtx  context.Context
	stopFollow context.CancelFunc
	following  map[uint64]bool
	disc       discovery
	ended      int // followers that reported their stream's end
	followers  int

	dirty      bool // delivered or refused something since the last checkpoint
	lastExpire time.Time
	lastCkpt   time.Time
	ckptCost   time.Duration
	metrics    *metricsPoller
	scopeEnc   []byte
	retries    atomic.Int64 // retries since Run began (Stats.Retries adds the checkpoint's)
}

// Run exports until ctx is cancelled (or, with Once, until everything is
// sent), then writes the checkpoint and returns the counters. Errors in
// the middle (a failing request, an unreadable file) are logged and counted,
// not returned; Run returns an error for bad options, an unreadable
// checkpoint, or with Once when nothing was found.
func Run(ctx context.Context, o Options) (Stats, error) {
	if err := o.defaults(); err != nil {
		return Stats{}, err
	}
	s := &shipper{
		o:         o,
		streams:   make(map[uint64]*stream),
		inflight:  make(map[*batch]bool),
		reads:     make(chan *readBatch, 4),
		results:   make(chan result, o.Workers),
		work:      make(chan *batch),
		stopWork:  make(chan struct{}),
		following: make(map[uint64]bool),
		disc:      discovery{patterns: o.Traces},
	}
	s.host, _ = os.Hostname()
	s.scopeEnc = encodeScope(o.Version)
	// The settling window holds complete traces for late records: at most
	// an eighth of the memory bound.
	s.asm = assembler{hold: o.Hold, window: min(1<<16, o.MaxMemory/recordCost/8), wait: o.Settle, emit: s.emit, stats: &s.stats,
		maxLinks: int(min(1<<16, o.MaxMemory/linkBound))}
	if o.Checkpoint != "" {
		release, err := lockCheckpoint(o.Checkpoint)
		if err != nil {
			return Stats{}, err
		}
		defer release()
	}
	starts, err := s.loadCheckpoint()
	if err != nil {
		return Stats{}, err
	}
	s.followCtx, s.stopFollow = context.WithCancel(context.Background())
	defer s.stopFollow()

	var wg sync.WaitGroup
	for i := 0; i < o.Workers; i++ {
		p := s.newPoster()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.worker(p)
		}()
	}
	if o.Admin != "" {
		m, err := newMetricsPoller(&s.o, s.host)
		if err != nil {
			return Stats{}, err
		}
		s.metrics = m
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.run(ctx, s.newPoster())
		}()
	}
	err = s.loop(ctx, starts)
	s.stopFollow()
	close(s.stopWork)
	// Requests in flight finish (each within Timeout); what they did not
	// deliver stays in the checkpoint.
	for len(s.inflight) > 0 {
		s.handle(<-s.results)
	}
	wg.Wait()
	if cerr := s.writeCheckpoint(); cerr != nil && err == nil {
		err = cerr
	}
	st := s.snapshotStats()
	if o.OnStats != nil {
		o.OnStats(st)
	}
	return st, err
}

func (s *shipper) newPoster() *poster {
	return &poster{
		client:     newHTTPClient(s.o.Timeout, s.o.Workers+1, s.o.Transport),
		headers:    s.o.Headers,
		gzip:       s.o.Gzip,
		retryFor:   s.o.RetryFor,
		backoffMin: s.o.BackoffMin,
		backoffMax: s.o.BackoffMax,
		logf:       s.o.Logf,
		onRetry:    s.countRetry,
	}
}

// countRetry is called by the workers and the metrics poller.
func (s *shipper) countRetry() { s.retries.Add(1) }

func (s *shipper) snapshotStats() Stats {
	st := s.stats
	st.Retries += s.retries.Load()
	st.SpansPending = s.pending
	st.RecordsHeld = s.asm.held()
	st.Streams = len(s.streams)
	st.Ended = 0
	for _, x := range s.order {
		if x.ended {
			st.Ended++
		}
	}
	if s.metrics != nil {
		s.metrics.addTo(&st)
	}
	return st
}

func (s *shipper) loop(ctx context.Context, starts map[uint64]position) error {
	tick := time.NewTicker(min(100*time.Millisecond, s.o.Poll))
	defer tick.Stop()
	lastScan, lastStats := time.Time{}, time.Now()
	found := false
	for {
		now := time.Now()
		if now.Sub(lastScan) >= s.o.Poll {
			lastScan = now
			n, err := s.discover(starts)
			if err != nil {
				s.o.Logf("export: %v", err)
			}
			found = found || n > 0 || len(s.streams) > 0
			if s.o.Once && !found && len(s.o.Traces) > 0 {
				return fmt.Errorf("export: %w in %s", errNoTraces, strings.Join(s.o.Traces, ", "))
			}
		}
		s.housekeep(now)
		if s.o.OnStats != nil && now.Sub(lastStats) >= time.Second {
			lastStats = now
			s.o.OnStats(s.snapshotStats())
		}
		if s.o.Once && (len(s.o.Traces) == 0 || s.ended == s.followers && s.pending == 0 && s.asm.open == 0 && len(s.inflight) == 0) {
			return nil
		}
		var reads <-chan *readBatch
		if s.memory() < s.o.MaxMemory {
			reads = s.reads
		}
		var work chan<- *batch
		var next *batch
		if len(s.ready) > 0 {
			work, next = s.work, s.ready[0]
		}
		select {
		case <-ctx.Done():
			return nil
		case rb := <-reads:
			s.absorb(rb, now)
		case r := <-s.results:
			s.handle(r)
		case work <- next:
			s.ready[0] = nil // the array must not keep delivered batches
			s.ready = s.ready[1:]
			s.inflight[next] = true
		case <-tick.C:
		}
	}
}

// memory is what the shipper holds, by the costs above.
func (s *shipper) memory() int64 {
	return (s.asm.open+s.pending+s.asm.links+s.asm.waiting)*recordCost + int64(len(s.inflight))*int64(s.o.BatchSpans)*spanBytes
}

// discover starts a follower for each new stream.
func (s *shipper) discover(starts map[uint64]position) (int, error) {
	files, err := s.disc.scan()
	for _, f := range files {
		id := f.hdr.Stream
		if s.following[id] {
			continue
		}
		if st := s.streams[id]; st != nil && st.ended {
			s.following[id] = true
			continue
		}
		pos, ok := starts[id]
		if !ok {
			pos = position{path: f.path, seq: f.hdr.Seq}
		}
		s.following[id] = true
		s.followers++
		fl := &follower{stream: id, hdr0: f.hdr, start: pos, once: s.o.Once, poll: s.o.Poll, host: s.host, out: s.reads,
			report: func(err error) { s.o.Logf("export: %v", err) }, later: s.disc.later, retry: max(10*s.o.Poll, time.Second)}
		go fl.run(s.followCtx)
	}
	return len(s.following), err
}

// absorb takes a batch of items from a follower.
func (s *shipper) absorb(rb *readBatch, now time.Time) {
	st := s.streamOf(rb.hdr)
	// The position is the follower's own stream's (readBatch.owner).
	own := st
	if rb.owner != nil && rb.owner.Stream != st.id {
		own = s.streamOf(rb.owner)
	}
	for i := range rb.probes {
		st.define(&rb.probes[i])
	}
	for i := range rb.remotes {
		m := &rb.remotes[i]
		if st.sentBefore(m.Trace) {
			if s.stats.LateRemotes++; s.stats.LateRemotes == 1 {
				s.o.Logf("export: stream %016x: the remote parent of trace %d came after spans of the trace were sent; they carry tigris's trace id, not the request's (later ones are counted in the summary)", st.id, m.Trace)
			}
		}
		st.addRemote(m)
	}
	// Links in their place among the records: a link precedes its child's.
	li := 0
	for i := range rb.recs {
		for ; li < len(rb.links) && rb.links[li].at <= i; li++ {
			s.asm.addLink(st, &rb.links[li].link, now)
		}
		s.asm.add(st, &rb.recs[i], now)
	}
	for ; li < len(rb.links); li++ {
		s.asm.addLink(st, &rb.links[li].link, now)
	}
	s.stats.Records += int64(len(rb.recs))
	s.stats.WriterLost += rb.lost
	s.stats.Gaps += rb.gaps
	own.path, own.seq = rb.path, rb.seq
	st.caughtUp, own.caughtUp = rb.caughtUp, rb.caughtUp
	if rb.items >= 0 {
		own.items = rb.items
	}
	if rb.ended || rb.failed {
		s.ended++
		for _, id := range rb.fed {
			x := s.streams[id]
			if x == nil {
				continue
			}
			if rb.failed {
				// With Once, the follower gave up on an unreadable file:
				// what was read goes, the traces stay open in the
				// checkpoint for the run that reads on.
				s.asm.drain(x)
				continue
			}
			x.ended = true
			s.asm.expire(x, now)
			s.asm.tick(x, now)
			s.asm.endLinks(x)
		}
		s.flushForming()
		for _, id := range rb.fed {
			if x := s.streams[id]; x != nil {
				x.release()
			}
		}
		return
	}
	s.asm.tick(st, now)
	if limit := s.o.MaxMemory / 2 / recordCost; s.asm.open > limit {
		s.asm.shed(s.order, limit/2)
	}
}

// streamOf returns the stream of h, new if it is the first of its items.
func (s *shipper) streamOf(h *writer.Header) *stream {
	st := s.streams[h.Stream]
	if st == nil {
		st = newStream(h, s.resource(h.Host, h.PID, h.Binary))
		s.streams[st.id] = st
		s.order = append(s.order, st)
	}
	return st
}

// housekeep runs on every turn of the loop: timers of traces and batches,
// and the checkpoint.
func (s *shipper) housekeep(now time.Time) {
	// Settled traces go after each read batch (absorb); the timers of the
	// traces are looked at every tenth of a second, not on every turn.
	if now.Sub(s.lastExpire) >= 100*time.Millisecond {
		s.lastExpire = now
		for _, st := range s.order {
			s.asm.tick(st, now)
			s.asm.expire(st, now)
		}
	}
	if s.forming != nil && (now.Sub(s.forming.first) >= s.o.BatchWait || s.o.Once && s.allRead()) {
		s.flushForming()
	}
	if s.dirty && now.Sub(s.lastCkpt) >= max(s.o.CheckpointEvery, 20*s.ckptCost) {
		if err := s.writeCheckpoint(); err != nil {
			s.o.Logf("export: %v", err)
		}
	}
}

func (s *shipper) allRead() bool { return s.ended == s.followers }

// emit is the assembler's output: spans into the forming batch.
func (s *shipper) emit(st *stream, spans []spanItem) {
	for len(spans) > 0 {
		if s.forming == nil {
			s.forming = &batch{first: time.Now()}
		}
		b := s.forming
		if len(b.groups) == 0 || b.groups[len(b.groups)-1].st != st {
			// Room for a whole batch: a batch is usually one stream.
			b.groups = append(b.groups, group{st: st, spans: make([]spanItem, 0, s.o.BatchSpans-b.n)})
		}
		g := &b.groups[len(b.groups)-1]
		k := min(len(spans), s.o.BatchSpans-b.n)
		st.withRemotes(spans[:k])
		g.spans = append(g.spans, spans[:k]...)
		b.n += k
		s.pending += int64(k)
		st.pending += int64(k)
		spans = spans[k:]
		if b.n >= s.o.BatchSpans {
			s.flushForming()
		}
	}
}

func (s *shipper) flushForming() {
	if s.forming != nil && s.forming.n > 0 {
		s.ready = append(s.ready, s.forming)
	}
	s.forming = nil
}

// handle takes a worker's result.
func (s *shipper) handle(r result) {
	delete(s.inflight, r.b)
	switch r.o {
	case sent, failed:
		r.b.settled()
	case tooLarge:
		if r.b.n < 2 {
			r.b.settled()
		}
	}
	switch r.o {
	case sent:
		s.pending -= int64(r.b.n)
		s.stats.SpansSent += int64(r.b.n) - r.rejected
		s.stats.SpansFailed += r.rejected
		s.stats.Requests++
		s.dirty = true
		if r.err != nil {
			s.o.Logf("export: the receiver refused %d of %d spans: %v", r.rejected, r.b.n, r.err)
		}
	case failed:
		s.pending -= int64(r.b.n)
		s.stats.SpansFailed += int64(r.b.n)
		s.dirty = true
		s.o.Logf("export: %d spans not delivered: %v", r.b.n, r.err)
	case tooLarge:
		a, b := r.b.split()
		if b == nil {
			s.pending -= int64(r.b.n)
			s.stats.SpansFailed += int64(r.b.n)
			s.dirty = true
			s.o.Logf("export: a single span is too large for the receiver (413); not delivered")
			return
		}
		s.ready = append([]*batch{a, b}, s.ready...)
	case stopped:
		s.ready = append([]*batch{r.b}, s.ready...)
	}
}

// settled: the batch's spans are no longer pending (delivered or given up);
// streams that ended and have nothing pending let go of their state.
func (b *batch) settled() {
	for _, g := range b.groups {
		g.st.pending -= int64(len(g.spans))
		g.st.release()
	}
}

// split halves a batch (nil second half for a batch of one span).
func (b *batch) split() (*batch, *batch) {
	if b.n < 2 {
		return b, nil
	}
	var all []group
	for _, g := range b.groups {
		all = append(all, g)
	}
	x, y := &batch{first: b.first}, &batch{first: b.first}
	half := b.n / 2
	for _, g := range all {
		for _, sp := range g.spans {
			t := x
			if x.n >= half {
				t = y
			}
			if len(t.groups) == 0 || t.groups[len(t.groups)-1].st != g.st {
				t.groups = append(t.groups, group{st: g.st})
			}
			t.groups[len(t.groups)-1].spans = append(t.groups[len(t.groups)-1].spans, sp)
			t.n++
		}
	}
	return x, y
}

// worker sends batches until the shipper stops.
func (s *shipper) worker(p *poster) {
	var spans []byte
	for {
		var b *batch
		select {
		case b = <-s.work:
		case <-s.stopWork:
			return
		}
		var pieces [][]byte
		spans = spans[:0]
		for _, g := range b.groups {
			start := len(spans)
			for i := range g.spans {
				spans = appendSpan(spans, g.st, &g.spans[i])
			}
			head, tail := wrapSpans(g.st.resource, s.scopeEnc, len(spans)-start)
			pieces = append(pieces, head, spans[start:], tail)
		}
		o, rejected, err := p.post(s.stopWork, s.o.TracesURL, pieces, true)
		if p.bodyHeld {
			spans = nil // the transport may still read the old buffer
		}
		s.results <- result{b: b, o: o, rejected: rejected, err: err}
	}
}
