// Package writer encodes fine-mode call records into trace files, reads them back and
// rebuilds call trees. It is linked into every monitored program, so it imports only
// the standard library, never panics on bad input or a failing disk, and makes a
// producer wait only under [Block], the default, when its queue is full ([Drop]
// never does).
//
// The byte-level format is specified in docs/trace-format.md.
//
// # Writers
//
// Three writers implement [Output] (a [Sink] plus Flush, Close and Stats):
//
//   - [Async] (NewAsync): producers copy each record into a ring owned by their P
//     (procPin), with no lock and no allocation; a writer goroutine encodes the
//     rings into chunks and writes them. It lives only while there is work (a
//     producer whose ring reaches a quarter starts it; it exits when the rings
//     are drained) and the periodic flush runs on a timer, so no goroutine of
//     the writer is left waiting where a program's goroutine-leak checks would
//     see it. A producer that is pinned already (the monitor's fine exit)
//     stores a record's fields into the slot [Async.Reserve] gives (inlined:
//     no call) and publishes it with [Slot.Commit], or, from the ring's wake
//     mark on, hands them to [Async.Append], which decides the wake and a full
//     ring. When a ring is full, [Block]
//     (the default) makes the producer drain part of its own ring (an assist:
//     it encodes and writes 1,024 records, as Sync does, instead of waiting for
//     the writer goroutine to get a CPU), and [Drop] discards the record and
//     counts it (the count reaches the file as a loss record). This is the
//     writer to use when a core is free for the writer goroutine; without one,
//     assists keep it lossless.
//   - [Sync] (NewSync): Write encodes under a lock and writes the chunk it fills.
//     Nothing is dropped for lack of room; the producer pays for encoding and for
//     the occasional write. Kieker found it the better choice on a single core.
//   - [Null]: discards and counts (MooBench's "collecting" configuration); a
//     pinned producer counts with [Null.WritePinned].
//
// # Contract
//
// Write(r) copies *r before it returns: r must not be retained by the writer and
// may be reused by the caller at once. Write allocates nothing (enforced by tests).
// Define must be called for a probe before the first Write of a record of that
// probe (it may be called again with a changed definition; readers keep the last).
//
// Every method of every writer is safe for concurrent use, and every method is
// nil-safe (a nil *Async discards), so call sites need no branches.
//
// Close is idempotent: it drains the queues, writes everything, closes the file and
// stops the flush timer, and later calls return the first call's result. A
// Write after Close is dropped and counted; Flush after Close returns ErrClosed.
//
// At least every Options.FlushInterval (default 1s) everything a writer holds is
// handed to the operating system, so a crash loses at most that much. A chunk is
// written whole: a record is never split across writes.
//
// # Accounting
//
// Every record passed to Write is, in the end, counted once in Stats: Written (its
// chunk was accepted by the operating system) or Dropped (queue full under Drop,
// write error, Write after Close; Stats.QueueFull and Stats.Late tell them
// apart); until then it is Queued. Options.OnClose receives the final Stats. Drops of the first two kinds are
// also written into the stream as loss records ("N records lost between t1 and
// t2") as soon as the file takes writes again.
//
// A call that had not returned when the monitor closed the writer is written
// as a record with [FlagUnfinished], its TOut the time of the close (format
// 1.5); those the monitor could not write reach the stream through
// [Async.Lose] or [Sync.Lose] as a loss record of reason [LossUnfinished].
//
// A failing write (full disk, removed directory, closed descriptor) is counted in
// Stats.Errors, reported once through Options.OnError, and retried every
// FlushInterval; meanwhile records are dropped and counted. Only creating the first
// file can make a constructor return an error.
//
// # Files
//
// A file is a header (stream id, file sequence number, clock base, host, pid,
// binary) followed by chunks of probe definitions, records and loss records, each
// chunk framed with a sync marker, a length and a CRC-32C. With
// Options.RotateBytes set, the writer continues in RotatedPath(path, 1), 2, ...;
// each file starts with its anchor, the header and every probe definition so far,
// so it can be read alone. The anchor is written twice and every later definition
// in two consecutive chunks, so that one damaged chunk costs only its own records,
// never a name or a header; the Reader returns each repeat once.
//
// # Reading
//
// [NewReader], [Open] (a file and its rotated successors) and [OpenFiles] return a
// [Reader] whose Next yields headers, probe definitions, records, loss records, and
// gaps: bytes it had to skip because a chunk was torn by a crash or corrupted.
// Damage is never an error; reading resumes at the next valid chunk. Reading costs
// time linear in the input whatever the damage (each byte is checksummed, searched
// and moved a bounded number of times; recover.go), and memory bounded by a few
// times the largest chunk (1 MiB).
//
// [BuildTraces] and [TraceBuilder] turn records into call trees per trace, with
// inclusive and exclusive times, using Kieker's EOI/ESS rule extended to traces
// with missing calls.
//
// # Times
//
// Record times in files are nanoseconds of the monitor's monotonic clock
// (runtime.nanotime, also returned by [Monotonic]); [Header].Clock maps them to
// wall time. The monitor stamps records with [Ticks], the time-stamp counter
// where it is invariant and cheaper than runtime.nanotime, and sets
// Options.TickTimes: the writer converts with a calibration against
// runtime.nanotime (clock.go) and names the clock in the header.
package writer
