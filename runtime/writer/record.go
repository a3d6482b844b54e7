package writer

// Record is one fine-mode call: the content of Kieker's OperationExecutionRecord for
// one execution of one probe. A call is one record written at exit (not a before/after
// pair): it halves the records per call, and the order index EOI and stack depth ESS,
// both taken at entry, are enough to rebuild the call tree (docs/trace-format.md).
//
// Record is a fixed value type: producers pass it by pointer and the writer copies
// it, so a Sink must not retain r after Write returns, and the caller may reuse it.
type Record struct {
	Probe uint32 // probe id, defined earlier in the stream by a ProbeDef
	Flags Flags  // error / panic facts, and which optional fields are set
	EOI   uint32 // execution order index within the trace, assigned at entry
	ESS   uint32 // execution stack size (depth) within the trace at entry
	Trace uint64 // trace id, unique within the stream
	GID   uint64 // goroutine id
	// TIn and TOut are entry and exit times: monotonic ns (runtime.nanotime)
	// in files, where Header.Clock maps them to wall time; from the monitor,
	// Ticks readings (Options.TickTimes, TicksToNanos).
	TIn  int64
	TOut int64
	// Size is the optional summary of the first non-error result (len or value);
	// meaningful only when Flags has FlagSize.
	Size int64
}

// Flags describe how a call ended and which optional fields are set. Bit 7
// (FlagLink, link.go) marks a record that carries a Link instead of a call,
// bit 6 (FlagRemote, remote.go) one that carries a Remote.
type Flags uint8

const (
	FlagError Flags = 1 << iota // the call returned a non-nil error
	FlagPanic                   // the call ended by panicking
	FlagSize                    // Record.Size is set
	// FlagUnfinished marks a call that had not returned when the writer
	// closed (format 1.5): TOut is the time of the close, not an exit, so
	// TOut - TIn is how long the call had run by then, a lower bound of its
	// duration. The monitor writes one for every recorded call still open at
	// exit (docs/trace-format.md, "Unfinished calls").
	FlagUnfinished
)

// Unfinished reports whether r is a call that had not returned when the
// writer closed (FlagUnfinished): its TOut is no exit time.
func (r *Record) Unfinished() bool { return r.Flags&FlagUnfinished != 0 }

// ProbeDef describes one probe once per stream, before its first Record.
type ProbeDef struct {
	ID        uint32
	Signature string // Go signature, types qualified by import path, e.g. "func (*example.com/shop.Store).Find(int) (example.com/shop.Owner, error)"
	Package   string
	Recv      string // receiver base type, "" for functions
	Name      string
	File      string
	Line      int
}

// Sink accepts fine records. Implementations are safe for concurrent use, never
// block unless configured to, and never allocate per record.
type Sink interface {
	// Define announces a probe; it is called once per probe before its records.
	Define(ProbeDef)
	// Write enqueues one record. It must not retain r.
	Write(r *Record)
}
