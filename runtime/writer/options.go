package writer

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"time"
)

// ErrClosed is returned by Flush after Close.
var ErrClosed = errors.New("writer: closed")

// OnFull is what an Async writer does with a record when its queue is full.
type OnFull uint8

const (
	// Block, the default, makes the producer drain its own queue (encode its
	// records and write the chunks they fill) when the queue is full and the
	// writer goroutine has not made room: the producer waits for the disk, as
	// with Sync, but never for the scheduler to run the writer goroutine.
	// Records are never dropped for lack of room (only for write errors).
	Block OnFull = iota
	// Drop discards the record and counts it; the count reaches the stream as a
	// loss record. The producer never waits.
	Drop
)

// Options configure Async and Sync. The zero value of every field is a documented
// default; only Path is required.
type Options struct {
	// Path is the file to write, already expanded by the caller. Parent directories
	// are created (0o755); the file is created or truncated (0o644). Rotated files
	// are named by RotatedPath.
	Path string

	// QueueSize is the number of records an Async writer buffers in total across its
	// per-P queues (rounded up to a power of two per P). Default 65536. Sync ignores it.
	QueueSize int

	// OnFull is the Async policy when a queue is full. Default Block.
	OnFull OnFull

	// RotateBytes starts a new file (a new header, all probe definitions again) once
	// the current one would grow beyond it. A file exceeds it by at most one chunk
	// when a single chunk is bigger. 0 means never rotate.
	RotateBytes int64

	// FlushInterval bounds how long a record may wait in memory: at least this often
	// the writer hands everything it holds to the operating system. Default 1s.
	FlushInterval time.Duration

	// ChunkBytes is the payload size at which a chunk is sealed and written.
	// Default 128 KiB; clamped to [256 B, 960 KiB].
	ChunkBytes int

	// Header facts. Zero values are filled from this process: os.Hostname,
	// os.Getpid, os.Executable, and a clock base taken now.
	Host   string
	PID    int
	Binary string
	Clock  ClockBase

	// OnError is called when writing, rotating or closing a file fails: once when a
	// failure starts, not again until a write has succeeded. While writes fail,
	// records are dropped and counted (Stats.Dropped, Stats.Errors). It runs on the
	// writer goroutine (Async) or on the goroutine that called Write/Flush/Close
	// after the writer's lock is released (Sync); it must not block for long and
	// must not call the writer's Flush or Close. A panic in it is recovered. Nil
	// means ignore.
	OnError func(error)

	// TickTimes says that Record.TIn and Record.TOut are Ticks readings, which
	// the writer converts to nanoseconds (the monitor's records); otherwise they
	// are nanoseconds of runtime.nanotime's scale and written as they are. The
	// header names the clock either way.
	TickTimes bool

	// OnClose, when set, is called once by the first Close with the final
	// Stats, after the file is closed: the monitor reports losses with it.
	OnClose func(Stats)

	create func(name string) (io.WriteCloser, error) // tests substitute failing files
}

// Stats is a snapshot of a writer's counters. Counters are read one by one, so a
// snapshot taken while producers run may be off by the records in flight; after
// Flush returns with no producers running, and after Close,
// Written + Dropped + Queued is exactly the number of Write calls.
type Stats struct {
	Queued      uint64 // accepted, not yet written nor dropped
	Written     uint64 // records in chunks the operating system accepted
	Dropped     uint64 // records lost: queue full, write errors, Write after Close
	Bytes       uint64 // bytes written to files, framing and headers included
	Files       int    // files started (1 + rotations)
	CurrentFile string // file being written; "" when none is open
	Errors      uint64 // failed create, write, rotate and close calls
	// The parts of Dropped with a known cause: the queue was full (OnFull Drop),
	// and Write after Close (or after the writer stopped on an internal
	// error). The rest were lost to write errors.
	QueueFull uint64
	Late      uint64
	// Async only: records producers encoded themselves because their queue
	// was full (OnFull Block), and times a producer woke the writer goroutine.
	Assisted uint64
	Wakes    uint64
}

// Output is what every writer in this package offers: a Sink that can be flushed,
// closed and observed. The monitor holds one.
type Output interface {
	Sink
	// Flush hands every record accepted before the call to the operating system
	// (no fsync). It returns the write error, if any, or ErrClosed after Close.
	Flush() error
	// Close flushes, closes the file and stops background work. It is idempotent:
	// later calls return the first call's result. Writes after Close are dropped
	// and counted.
	Close() error
	// Stats may be called at any time from any goroutine.
	Stats() Stats
}

var (
	_ Output = (*Async)(nil)
	_ Output = (*Sync)(nil)
	_ Output = (*Null)(nil)
)

// withDefaults returns o with defaults applied.
func (o Options) withDefaults() Options {
	if o.QueueSize <= 0 {
		o.QueueSize = 1 << 16
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	switch {
	case o.ChunkBytes <= 0:
		o.ChunkBytes = defaultChunkBytes
	case o.ChunkBytes < minChunkBytes:
		o.ChunkBytes = minChunkBytes
	case o.ChunkBytes > maxChunkBytes:
		o.ChunkBytes = maxChunkBytes
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if o.Binary == "" {
		if exe, err := os.Executable(); err == nil {
			o.Binary = exe
		} else if len(os.Args) > 0 {
			o.Binary = os.Args[0]
		}
	}
	if o.Clock == (ClockBase{}) {
		o.Clock = Now()
	}
	return o
}

// Now returns the clock base of this instant: the wall time and the monotonic
// reading of runtime.nanotime, the clock the monitor stamps records with.
func Now() ClockBase {
	w := time.Now().UnixNano()
	m := nanotime()
	return ClockBase{Wall: w, Mono: m}
}

// Monotonic returns runtime.nanotime, the clock records are stamped with.
func Monotonic() int64 { return nanotime() }

// header builds the header of file seq.
func (o *Options) header(stream uint64, seq int) Header {
	return Header{
		Major:  FormatMajor,
		Minor:  FormatMinor,
		Stream: stream,
		Seq:    seq,
		Clock:  o.Clock,
		Start:  time.Now().UnixNano(),
		PID:    o.PID,
		Host:   o.Host,
		Binary: o.Binary,

		ClockSource: o.clockSource(),
		TickHz:      o.tickHz(),
	}
}

func (o *Options) clockSource() ClockSource {
	if o.TickTimes {
		return TickSource()
	}
	return ClockNanotime
}

func (o *Options) tickHz() uint64 {
	if o.TickTimes {
		return TickHz()
	}
	return 0
}

func newStreamID() uint64 { return rand.Uint64() }

// report calls o.OnError, recovering a panic in it.
func (o *Options) report(err error) {
	if err == nil || o.OnError == nil {
		return
	}
	defer func() { _ = recover() }()
	o.OnError(err)
}

// quiesce returns after every goroutine that was inside a procPin section when it was
// called has left it. Stopping the world waits for all Ps to reach a safe point, and
// a pinned goroutine has none; runtime.ReadMemStats is the cheapest exported call
// that stops the world (tens of µs). Close uses it so that a Write that saw the
// writer open has published its record before the final drain.
func quiesce() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
}
