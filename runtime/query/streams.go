package query

import "time"

// Column is one field of a stream's tuples.
type Column struct {
	Name string `json:"name"`
	Type Type   `json:"type"`
	Doc  string `json:"-"`
	// Static columns are known for a probe before it runs (its function,
	// package, file...): a query's predicates on them choose the probes it
	// acquires, at plan time.
	Static bool `json:"-"`
	// Fine columns (trace, depth) need the probe in fine mode.
	Fine bool `json:"-"`
}

// StreamDef describes a stream.
type StreamDef struct {
	Name string
	Doc  string
	// Sampled streams have a value at every instant (the CPU's load, the
	// heap's size): a query reads them through SAMPLE(stream, interval).
	// The calls stream is a stream of events.
	Sampled bool
	Columns []Column
}

// Column returns the index of the column named name, or -1.
func (s *StreamDef) Column(name string) int {
	for i, c := range s.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// The calls stream's column indexes, in the order of Calls.Columns.
const (
	CallTime = iota
	CallStart
	CallDuration
	CallFunction
	CallPackage
	CallReceiver
	CallName
	CallSignature
	CallFile
	CallLine
	CallProbe
	CallGoroutine
	CallTrace
	CallDepth
	CallError
	CallPanicked
	CallTraceID
)

// Calls is the stream of completed calls of instrumented functions.
var Calls = &StreamDef{
	Name: "calls",
	Doc:  "one tuple per completed call of an instrumented function, when it returns",
	Columns: []Column{
		{Name: "time", Type: Time, Doc: "when the call returned (the tuple's time)"},
		{Name: "start", Type: Time, Doc: "when the call started"},
		{Name: "duration", Type: Duration, Doc: "how long it ran"},
		{Name: "function", Type: String, Static: true, Doc: "the function in Go's symbol form, e.g. example.com/shop.(*Store).Find"},
		{Name: "package", Type: String, Static: true, Doc: "its package's import path"},
		{Name: "receiver", Type: String, Static: true, Doc: "its receiver's base type, \"\" for a function"},
		{Name: "name", Type: String, Static: true, Doc: "its name without package and receiver"},
		{Name: "signature", Type: String, Static: true, Doc: "its Go signature"},
		{Name: "file", Type: String, Static: true, Doc: "the file it is declared in"},
		{Name: "line", Type: Int, Static: true, Doc: "the line of its declaration"},
		{Name: "probe", Type: Int, Static: true, Doc: "tigris's probe id"},
		{Name: "goroutine", Type: Int, Doc: "the goroutine id (0 where it cannot be read cheaply)"},
		{Name: "trace", Type: Int, Fine: true, Doc: "the trace id (needs fine mode)"},
		{Name: "depth", Type: Int, Fine: true, Doc: "the call's depth in its trace, 0 at a root (needs fine mode)"},
		{Name: "error", Type: Bool, Doc: "whether it returned a non-nil error"},
		{Name: "panicked", Type: Bool, Doc: "whether it ended by panicking"},
		{Name: "trace_id", Type: String, Fine: true, Doc: "the W3C trace id of the request whose trace the call's trace joined, 32 lowercase hex digits; \"\" when it joined none (needs fine mode)"},
	},
}

// The runtime streams, read through SAMPLE. Each has time first.
var (
	CPU = &StreamDef{Name: "cpu", Sampled: true, Doc: "the process's CPU use over each interval (getrusage)", Columns: []Column{
		{Name: "time", Type: Time, Doc: "end of the interval"},
		{Name: "busy", Type: Float, Doc: "CPU time over the interval's wall time times GOMAXPROCS, 0 to 1 (70% is 0.7)"},
		{Name: "cpu_seconds", Type: Float, Doc: "user and system CPU seconds in the interval"},
		{Name: "gomaxprocs", Type: Int, Doc: "GOMAXPROCS"},
	}}
	Heap = &StreamDef{Name: "heap", Sampled: true, Doc: "the Go heap (runtime/metrics)", Columns: []Column{
		{Name: "time", Type: Time, Doc: "when it was read"},
		{Name: "live", Type: Int, Doc: "bytes of heap objects, live or not yet swept"},
		{Name: "allocated", Type: Int, Doc: "bytes allocated in the interval"},
		{Name: "objects", Type: Int, Doc: "heap objects"},
		{Name: "goal", Type: Int, Doc: "the heap size the next GC aims at"},
	}}
	Goroutines = &StreamDef{Name: "goroutines", Sampled: true, Doc: "the number of goroutines", Columns: []Column{
		{Name: "time", Type: Time, Doc: "when it was read"},
		{Name: "count", Type: Int, Doc: "goroutines alive"},
	}}
	GC = &StreamDef{Name: "gc", Sampled: true, Doc: "garbage collection over each interval (runtime/metrics)", Columns: []Column{
		{Name: "time", Type: Time, Doc: "end of the interval"},
		{Name: "cycles", Type: Int, Doc: "GC cycles completed in the interval"},
		{Name: "pause", Type: Duration, Doc: "stop-the-world time in the interval (GC pauses, from the runtime's histogram: an upper bound)"},
		{Name: "max_pause", Type: Duration, Doc: "the longest pause in the interval (its histogram bucket's upper bound)"},
	}}
)

// Builtin are the built-in streams, calls first.
var Builtin = []*StreamDef{Calls, CPU, Heap, Goroutines, GC}

// builtin returns the built-in stream named name, or nil.
func builtin(name string) *StreamDef {
	for _, s := range Builtin {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Bounds on what a query may ask for.
const (
	MinSample   = 10 * time.Millisecond // SAMPLE's shortest interval
	MaxSpan     = 24 * time.Hour        // the longest window, join window, sample interval or FOR
	MinWindow   = 10 * time.Millisecond // the shortest window or slide
	MaxSlides   = 1000                  // windows one tuple may fall into (size / slide)
	MaxLimit    = 1000000               // the largest LIMIT
	MinFor      = time.Second           // a trigger action's shortest FOR
	MaxDerived  = 8                     // derived streams read through one another
	MaxItems    = 256                   // output columns of a SELECT
	MaxGroupBy  = 16                    // GROUP BY expressions
	MaxInValues = 1024                  // values of one IN list
)
