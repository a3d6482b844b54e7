package traceconv

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// Options tune a conversion. The zero value of every field is a documented default.
type Options struct {
	// Progress, when set, is called on the converting goroutine every ProgressEvery
	// records read, and once more at the end with Progress.Done set.
	Progress func(Progress)
	// ProgressEvery is the number of records between Progress calls. Default 1000000.
	ProgressEvery int64
	// Lag is how many more records a trace waits for after its root call's record
	// arrived before it is built. The asynchronous writer drains one queue per P,
	// so records of one trace may reach the file out of order; Lag bounds how far.
	// Default 1<<17, twice the writer's default queue. Record-by-record formats
	// (Chrome, Kieker, read) ignore it.
	Lag int
	// MaxPending bounds the records held for traces whose root call has not been
	// read yet (a long-running root, or a root that was lost). When it is exceeded
	// the trace first seen longest ago is built as it is and counted in
	// Report.Split. Default 1<<22 records (about 250 MB).
	MaxPending int
	// MaxFrames bounds the frames of one pprof sample (Pprof, Profile). A call
	// path deeper than that keeps its outermost MaxFrames/2 and innermost
	// MaxFrames/2-1 frames around one "(elided calls)" frame, and samples that
	// then look alike are merged; Report.Elided counts the paths. Without the
	// bound a recursion D calls deep makes D samples of up to D frames each,
	// memory and output quadratic in D. Default 64 (the depth of Go's own CPU
	// profiles); values below 4 count as 4.
	MaxFrames int
	// Joined, when set, keeps only the traces that joined the request trace
	// of one W3C trace id (a remote parent, format 1.4; FindJoined reads
	// them from the same input first): a trace id from Jaeger or Tempo
	// finds tigris's detail of that request. Tree formats (stats, pprof,
	// OPEN.xtrace, Kieker's trees) keep those call trees, WriteLines those
	// traces' records, remote parents and links; Chrome's and Kieker's
	// record formats ignore it.
	Joined *Joined
}

func (o Options) withDefaults() Options {
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 1_000_000
	}
	if o.Lag <= 0 {
		o.Lag = 1 << 17
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 1 << 22
	}
	if o.MaxFrames <= 0 {
		o.MaxFrames = 64
	}
	o.MaxFrames = max(o.MaxFrames, 4)
	return o
}

// Progress is what Options.Progress receives.
type Progress struct {
	Records int64         // records read so far
	Elapsed time.Duration // since the conversion started
	Done    bool          // the last call: the input is exhausted
}

// Report says what a conversion read and what it could not. Every converter
// fills it; fields a converter has no use for stay zero (Traces, Orphans and
// Split are counted only by the converters that build call trees).
type Report struct {
	Files   int   // input files started
	Streams int   // distinct record streams (writer instances) seen
	Records int64 // records read
	// Unfinished are the records (of Records) of calls that had not returned
	// when the program's writer closed (writer.FlagUnfinished): their exit
	// time is the close's, and summaries leave them out of durations.
	Unfinished int64
	Probes     int64 // probe definitions read
	Undefined  int64 // records whose probe had no definition (named "probe#N")

	Losses       int64  // loss items read
	Lost         uint64 // records the monitored program's writer reported lost
	Gaps         int64  // unreadable stretches the reader skipped
	SkippedBytes int64
	Torn         int64 // gaps that ran to the end of a file (a crash mid-write)
	// NotTrace are the input files with nothing of a trace in them (not a
	// trace file at all), and NotTraceBytes their size. Their bytes count in
	// Gaps and SkippedBytes too, but they are no item of the output.
	NotTrace      []string
	NotTraceBytes int64

	Links int64 // link items read: traces begun in a goroutine another trace started

	Traces  int64 // call trees built
	Orphans int64 // trees built without their root call (root lost, sampled out, or late)
	Split   int64 // trees built early to bound memory (Options.MaxPending)
	Elided  int64 // call paths deeper than Options.MaxFrames, shortened in a profile (pprof only)

	// ReadErr is the error that stopped reading early (an I/O error, or a file of
	// an unsupported format version), nil when the input was read to its end.
	// Everything read before it was converted.
	ReadErr error
}

// Empty reports whether nothing usable was read: no header, no probe definition
// and no record.
func (r *Report) Empty() bool {
	return r.Streams == 0 && r.Probes == 0 && r.Records == 0
}

// Warnings describes, one line each, what the input lost: records the writer
// dropped, bytes the reader skipped, trees built incomplete, a read error. It is
// empty for a clean input.
func (r *Report) Warnings() []string {
	var w []string
	if r.Lost > 0 || r.Losses > 0 {
		w = append(w, fmt.Sprintf("the monitored program lost %d records (%d loss reports in the stream)", r.Lost, r.Losses))
	}
	if r.Unfinished > 0 {
		w = append(w, fmt.Sprintf("%d calls had not returned when the monitored program's writer closed (unfinished records: their time is how long they had run by then; left out of durations)", r.Unfinished))
	}
	for _, name := range r.NotTrace {
		if name == "" {
			name = "the input"
		}
		w = append(w, fmt.Sprintf("skipped %s: not a tigris trace file", name))
	}
	if gaps := r.Gaps - int64(len(r.NotTrace)); gaps > 0 {
		s := fmt.Sprintf("skipped %d unreadable bytes in %d places (corrupt or unfinished chunks)", r.SkippedBytes-r.NotTraceBytes, gaps)
		if r.Torn > 0 {
			s += fmt.Sprintf("; %d at the end of a file, as a crash leaves it", r.Torn)
		}
		w = append(w, s)
	}
	if r.Undefined > 0 {
		w = append(w, fmt.Sprintf("%d records name a probe that has no definition", r.Undefined))
	}
	if r.Orphans > 0 {
		w = append(w, fmt.Sprintf("%d call trees lack their root call (lost, sampled out or out of order); they start at the first recorded call", r.Orphans))
	}
	if r.Split > 0 {
		w = append(w, fmt.Sprintf("%d unfinished call trees were built early to bound memory; their later calls form separate trees", r.Split))
	}
	if r.Elided > 0 {
		w = append(w, fmt.Sprintf("%d call paths are deeper than the profile's frame limit; their middle frames are merged into %s", r.Elided, elidedName))
	}
	if r.ReadErr != nil {
		w = append(w, "reading stopped early: "+r.ReadErr.Error())
	}
	return w
}

// stream is one writer's output: a file, or a rotated set of files.
type stream struct {
	index  int            // order among the streams of the input, from 0
	hdr    *writer.Header // nil when the input has no readable header
	probes []*probe       // by id, for ids below len(probes)
	big    map[uint32]*probe
}

// wall converts a record time (monotonic clock) to Unix nanoseconds. Without a
// header the monotonic reading is all there is.
func (s *stream) wall(mono int64) int64 {
	if s.hdr == nil {
		return mono
	}
	return s.hdr.Clock.Wall + (mono - s.hdr.Clock.Mono)
}

func (s *stream) pid() int {
	if s.hdr == nil {
		return 0
	}
	return s.hdr.PID
}

func (s *stream) host() string {
	if s.hdr == nil {
		return ""
	}
	return s.hdr.Host
}

// traceID makes trace ids unique across the streams of one input: each process
// numbers its traces from 1, so stream k's ids are offset by k<<40.
func (s *stream) traceID(t uint64) uint64 { return t + uint64(s.index)<<40 }

// probe is a probe as a converter sees it. A redefinition makes a new probe, so a
// converter's per-probe cache (idx) never outlives the definition it was made from.
type probe struct {
	id  uint32
	def *writer.ProbeDef // nil when the stream never defined the probe
	sig string           // def.Signature, or "probe#ID"
	// idx belongs to the converter: -1 until it assigns an index into its own tables.
	idx int
}

const denseProbes = 1 << 16 // probe ids below this are looked up in a slice

func (s *stream) define(d *writer.ProbeDef) {
	p := &probe{id: d.ID, def: d, sig: d.Signature, idx: -1}
	if p.sig == "" {
		p.sig = qualifiedName(d)
	}
	s.put(p)
}

// probe returns probe id of the stream, creating an undefined one ("probe#ID")
// on first use.
func (s *stream) probe(id uint32) *probe {
	if int(id) < len(s.probes) {
		if p := s.probes[id]; p != nil {
			return p
		}
	} else if p := s.big[id]; p != nil {
		return p
	}
	p := &probe{id: id, sig: "probe#" + strconv.FormatUint(uint64(id), 10), idx: -1}
	s.put(p)
	return p
}

func (s *stream) put(p *probe) {
	if p.id < denseProbes {
		for int(p.id) >= len(s.probes) {
			s.probes = append(s.probes, nil)
		}
		s.probes[p.id] = p
		return
	}
	if s.big == nil {
		s.big = make(map[uint32]*probe)
	}
	s.big[p.id] = p
}

// scanner walks a Reader once and hands each item to a converter's callbacks,
// keeping the per-stream context (header, probe table) and the Report.
type scanner struct {
	opt Options
	rep *Report

	// onStream is called when a new stream starts, before its first item; the
	// previous stream (if any) has ended. Tree converters flush there.
	onStream func(s *stream) error
	// onHeader is called for every file header, including a stream's first.
	onHeader func(s *stream) error
	onRecord func(s *stream, p *probe, r *writer.Record) error
	onLoss   func(s *stream, l *writer.Loss) error
	onLink   func(s *stream, l *writer.Link) error
	onRemote func(s *stream, m *writer.Remote) error
	// onItem sees every item before the callbacks above; s is nil for a gap
	// before the first header.
	onItem func(s *stream, it *writer.Item) error
}

// run reads r to its end. It returns the first error a callback returns; read
// errors go to Report.ReadErr.
func (sc *scanner) run(r *writer.Reader) error {
	opt := sc.opt.withDefaults()
	start := time.Now()
	var cur *stream
	var n int64 // records so far
	next := opt.ProgressEvery
	begin := func(h *writer.Header) (*stream, error) {
		s := &stream{index: sc.rep.Streams, hdr: h}
		sc.rep.Streams++
		if sc.onStream != nil {
			if err := sc.onStream(s); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	var err error
	for {
		it, rerr := r.Next()
		if rerr != nil {
			if rerr != io.EOF {
				sc.rep.ReadErr = rerr
			}
			break
		}
		if it.Kind == writer.KindGap && it.Gap.NotTrace {
			// Not damage: a file that is no trace, said once in Warnings
			// (or, when nothing else was read, by the caller).
			sc.rep.NotTrace = append(sc.rep.NotTrace, it.Gap.File)
			sc.rep.NotTraceBytes += it.Gap.Bytes
			continue
		}
		switch {
		case it.Kind == writer.KindHeader:
			if cur == nil || cur.hdr == nil || cur.hdr.Stream != it.Header.Stream {
				cur, err = begin(it.Header)
			} else {
				cur.hdr = it.Header
			}
		case cur == nil && it.Kind != writer.KindGap:
			// Items before any readable header: a stream whose first chunk is lost.
			cur, err = begin(nil)
		}
		if err != nil {
			break
		}
		if it.Kind == writer.KindProbe {
			cur.define(it.Probe)
		}
		if sc.onItem != nil {
			if err = sc.onItem(cur, &it); err != nil {
				break
			}
		}
		switch it.Kind {
		case writer.KindHeader:
			if sc.onHeader != nil {
				err = sc.onHeader(cur)
			}
		case writer.KindRecord:
			p := cur.probe(it.Record.Probe)
			if p.def == nil {
				sc.rep.Undefined++
			}
			if sc.onRecord != nil {
				err = sc.onRecord(cur, p, &it.Record)
			}
			if n++; n == next && opt.Progress != nil {
				next += opt.ProgressEvery
				opt.Progress(Progress{Records: n, Elapsed: time.Since(start)})
			}
		case writer.KindLoss:
			if sc.onLoss != nil {
				err = sc.onLoss(cur, &it.Loss)
			}
		case writer.KindLink:
			if sc.onLink != nil {
				err = sc.onLink(cur, &it.Link)
			}
		case writer.KindRemote:
			if sc.onRemote != nil {
				err = sc.onRemote(cur, &it.Remote)
			}
		case writer.KindGap:
			if it.Gap.Torn {
				sc.rep.Torn++
			}
		}
		if err != nil {
			break
		}
	}
	st := r.Stats()
	sc.rep.Files = st.Files
	sc.rep.Records = st.Records
	sc.rep.Unfinished = st.Unfinished
	sc.rep.Probes = st.Probes
	sc.rep.Losses = st.Losses
	sc.rep.Links = st.Links
	sc.rep.Lost = st.Lost
	sc.rep.Gaps = st.Gaps
	sc.rep.SkippedBytes = st.SkippedBytes
	if opt.Progress != nil {
		opt.Progress(Progress{Records: st.Records, Elapsed: time.Since(start), Done: true})
	}
	return err
}

// scanTrees reads r and hands every call tree, with the stream it belongs to, to
// emit; onLoss, when set, sees the loss items.
func scanTrees(r *writer.Reader, opt Options, rep *Report, emit func(s *stream, t *writer.Trace) error,
	onLoss func(s *stream, l *writer.Loss) error) error {
	var cur *stream
	asm := newAssembler(opt, rep, func(t *writer.Trace) error {
		if opt.Joined != nil && !opt.Joined.has(cur, t.ID) {
			return nil
		}
		return emit(cur, t)
	})
	sc := scanner{
		opt: opt,
		rep: rep,
		onStream: func(s *stream) error {
			// A trace never spans two streams: finish the previous one's.
			err := asm.flush()
			cur = s
			return err
		},
		onRecord: func(_ *stream, _ *probe, r *writer.Record) error { return asm.add(r) },
		onLoss:   onLoss,
		onLink:   func(_ *stream, l *writer.Link) error { asm.link(l); return nil },
		onRemote: func(_ *stream, m *writer.Remote) error { asm.remote(m); return nil },
	}
	if err := sc.run(r); err != nil {
		return err
	}
	return asm.flush()
}
