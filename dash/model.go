package dash

import (
	"time"
)

// View is everything one page shows. A Source builds it; the server renders
// it with the page template. It holds no secret: the admin token stays in the
// Source's client.
type View struct {
	Live    bool
	Target  string // the admin address or the trace file, as given
	Title   string // the program's binary, or the file's name
	At      time.Time
	Refresh time.Duration // live: how often the page refreshes
	// Problems are lines to show above everything: an unreachable program, a
	// damaged trace.
	Problems []string
	Process  Process

	Functions Functions
	Analyzer  Analyzer
	Modes     Modes
	Traces    Traces
	Writer    Writer

	// Set by the server when rendering.
	Q     Query
	Flash *Flash
	Query bool // the query box is shown
}

// Flash says what the last change from the page did.
type Flash struct {
	Text string
	Ctl  string // the tigris ctl command that does the same
	Err  bool
}

// Process describes the monitored program.
type Process struct {
	PID        int
	Host       string
	Binary     string
	Go         string
	Uptime     time.Duration // live
	Span       time.Duration // file: first call to last
	Probes     int           // live: probes registered
	ModeCounts map[string]int
	Sampling   string // "10%", or "100% configured, 5.4% in force: ..."
}

// Functions is the top-functions table.
type Functions struct {
	Rows []FuncRow
	// Count is the number of functions with calls; Rows holds the first
	// ones in the sort order.
	Count int
	Sort  string // total, calls, mean, p99, errors
	All   bool   // every function is listed (at most maxAllRows)
	// Group describes the group of the analyzer the table is filtered to
	// (file: Query.Group), "" for all functions.
	Group string
	// Source says where the counts come from; DistSource where the
	// latencies; Series what one sparkline point is.
	Source, DistSource, Series string
	Controls                   Controls
}

// FuncRow is one function.
type FuncRow struct {
	ID        uint32 // live: probe id
	Signature string
	File      string
	Line      int
	Mode      string // live: off, coarse, fine
	// Phase1 is phase 1's effect on the probe ("times 1 call in 8",
	// "switched off"), Phase1Why why; "" when none.
	Phase1, Phase1Why string
	Calls             uint64
	Errors            uint64
	Panics            uint64
	TotalNs           float64
	MeanNs            float64
	StdDevNs          float64
	// Dist is the latency distribution of the function's recorded calls;
	// nil when none were recorded (live: the function was not fine).
	Dist *Dist
	// Series are the calls per window, oldest first; SeriesMean the mean
	// duration in each (0 without calls).
	Series     []float64
	SeriesMean []float64
	Pattern    string // the pointcut that selects exactly this function
}

// Dist summarizes recorded durations (ns).
type Dist struct {
	N                  uint64
	P50, P95, P99, Max float64
	Bins               []Bin
}

// Controls says whether the page may switch anything, and if not, why.
type Controls struct {
	Enabled bool
	Why     string // why not, when !Enabled
	CSRF    string // set by the server when rendering
}

// Analyzer is the two-phase analyzer's state.
type Analyzer struct {
	Enabled  bool
	Phase    string // one line: which phase, since when
	Detail   string
	Criteria string
	Metrics  []KV // criterion → metric, of the filter's criteria first
	Interval string
	Window   string
	Budget   string
	Last     *Cycle   // the latest cycle, nil before the first
	Cycles   []Cycle  // newest first
	Timeline Timeline // selections per cycle
	// Replay says the cycles were replayed offline over a trace's windows.
	Replay   string
	Controls Controls
	Err      string // settings could not be read or evaluated
}

// KV is a key and a value, in order.
type KV struct{ Key, Value string }

// Cycle is one analysis cycle.
type Cycle struct {
	Seq        int
	At         time.Time
	Trigger    string
	Window     string
	Took       string
	Candidates int
	Selected   []string
	Added      []string
	Removed    []string
	Reasons    map[string][]string
	Why        string
	Err        string
	Sampling   string
	Budget     string
	Partitions []Partition
}

// Partition is one criterion's five groups, in the criterion's order (least
// first) whatever the metric's direction.
type Partition struct {
	Criterion string
	Metric    string
	Direction string
	Method    string
	N         int
	Excluded  int
	Counts    [5]int
	Cuts      []string // the four boundaries, in the criterion's order
	// Members are, for a file, the functions in each group (signatures),
	// most of the criterion first; the page lists the first maxMembers.
	Members [5][]string
}

// Timeline is which functions each cycle selected: Rows × Cycles.
type Timeline struct {
	Cycles []int    // cycle numbers, oldest first
	Rows   []string // functions selected at least once
	Cells  [][]bool // Cells[row][cycle]
	// More is how many more functions some cycle selected: Rows holds the
	// maxTimelineRows selected most often.
	More int
}

// Modes is the rules that set probe modes.
type Modes struct {
	Configured []Rule
	Manual     []Rule
	Counts     []KV // mode → probes
	Sampling   Sampling
	Controls   Controls
	// Recorded lists, for a trace file, the functions that have records.
	Recorded int
}

// Rule is one rule; Index is a manual rule's position for deleting it.
type Rule struct {
	Index   int
	Pattern string
	Mode    string
}

// Sampling is the sampling rate, configured and in force.
type Sampling struct {
	Configured string
	Effective  string
	Reason     string
}

// Traces are recent call trees.
type Traces struct {
	List     []TraceRow
	Shown    *TraceDetail // the one drawn
	Source   string       // where the trees come from
	Download bool         // the window can be downloaded
	Empty    string       // why there is none
	// Joined says some tree listed joined a request's trace (TraceRow.TraceID).
	Joined bool
	// NotKept is the W3C trace id the page asked for when no tree kept
	// joined it: the query box finds its calls (trace_id).
	NotKept string
}

// TraceRow is one call tree in the list.
type TraceRow struct {
	ID     uint64
	Root   string // signature of the first root
	Start  time.Time
	DurNs  float64
	Calls  int
	Errors int
	Panics int
	Kind   string // "slowest", "latest", or both
	// TraceID is the W3C trace id of the request whose trace the tree
	// joined (32 hex digits), "" if none.
	TraceID string
}

// TraceDetail is the call tree drawn.
type TraceDetail struct {
	TraceRow
	GID       uint64
	Truncated bool
	Nodes     []TraceNode // execution order
}

// TraceNode is one call of a drawn tree.
type TraceNode struct {
	Signature string
	Depth     int
	Parent    int
	Missing   int
	StartNs   float64 // from the tree's start
	DurNs     float64
	SelfNs    float64
	Error     bool
	Panic     bool
}

// Writer is the trace writer's health.
type Writer struct {
	Active  bool
	File    string
	Written uint64
	Dropped uint64
	Queued  uint64
	Bytes   uint64
	Files   int
	Errors  uint64
	Note    string
	// Series: records written and lost per window (live).
	WrittenSeries []float64
	DroppedSeries []float64
	QueuedSeries  []float64
	// File: what the reader found.
	Gaps     int64
	Skipped  int64
	Losses   int64
	Warnings []string
}
