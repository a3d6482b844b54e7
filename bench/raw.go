package bench

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"
)

// The raw data file the example programs write (examples/moobench/raw.go has
// the layout): an 80-byte little-endian header, then one int64 per top-level
// call, goroutine after goroutine. Version 1 files, without the allocation
// counts, had a 64-byte header; they are still read.
const (
	rawMagic        = "MOOBENCH"
	rawVersion      = 2
	rawHeaderSize   = 80
	rawHeaderSizeV1 = 64
)

// RunData is one run of one configuration: one process.
type RunData struct {
	Experiment string `json:"experiment"`
	Variant    string `json:"variant"`
	Run        int    `json:"run"` // 1-based

	// From the raw data file's header.
	Goroutines     int           `json:"goroutines"`
	Calls          int           `json:"calls"` // per goroutine
	Depth          int           `json:"depth"`
	MethodTime     time.Duration `json:"methodTimeNs"`
	ClockPairNs    float64       `json:"clockPairNs"` // 0: not measured
	ClockPairIters int64         `json:"clockPairIters"`
	Elapsed        time.Duration `json:"elapsedNs"` // the benchmark loop, all goroutines
	// Mallocs and AllocBytes are what the whole process allocated during the
	// benchmark loop (runtime.MemStats deltas); -1 in files of format version 1,
	// which did not count.
	Mallocs    int64 `json:"mallocs"`
	AllocBytes int64 `json:"allocBytes"`

	// Filled by the driver.
	File     string        `json:"file,omitempty"`     // raw data file
	Log      string        `json:"log,omitempty"`      // the process' stdout and stderr
	Wall     time.Duration `json:"wallNs,omitempty"`   // the whole process
	CPU      time.Duration `json:"cpuNs,omitempty"`    // the whole process' user and system CPU time
	LoadAvg  float64       `json:"loadAvg,omitempty"`  // 1-minute load average before the run
	OutBytes int64         `json:"outBytes,omitempty"` // bytes the run left in its scratch directory (trace files)
	// Trace is what the run's trace file (Variant.Trace) holds; nil when the
	// configuration names none.
	Trace *TraceCount `json:"trace,omitempty"`
	Notes []string    `json:"notes,omitempty"` // lines of the log worth reporting

	// Timings are the G·N ns per top-level call, goroutine-major. Nil until
	// loaded (Load, ReadRaw, ReadRawCSV); the driver does not keep them.
	Timings []int64 `json:"-"`
}

// ReadRaw reads a raw data file.
func ReadRaw(path string) (*RunData, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := decodeRaw(b)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	r.File = path
	return r, nil
}

func decodeRaw(b []byte) (*RunData, error) {
	if len(b) < rawHeaderSizeV1 || string(b[:8]) != rawMagic {
		return nil, fmt.Errorf("not a MooBench raw data file")
	}
	le := binary.LittleEndian
	size := rawHeaderSize
	switch v := le.Uint32(b[8:]); v {
	case rawVersion:
	case 1:
		size = rawHeaderSizeV1
	default:
		return nil, fmt.Errorf("raw data format version %d, want 1 or %d", v, rawVersion)
	}
	if len(b) < size {
		return nil, fmt.Errorf("raw data file shorter than its %d-byte header", size)
	}
	r := &RunData{
		Goroutines:     int(le.Uint32(b[12:])),
		Calls:          int(int64(le.Uint64(b[16:]))),
		Depth:          int(int64(le.Uint64(b[24:]))),
		MethodTime:     time.Duration(le.Uint64(b[32:])),
		ClockPairNs:    math.Float64frombits(le.Uint64(b[40:])),
		ClockPairIters: int64(le.Uint64(b[48:])),
		Elapsed:        time.Duration(le.Uint64(b[56:])),
		Mallocs:        -1,
		AllocBytes:     -1,
	}
	if size >= rawHeaderSize {
		r.Mallocs = int64(le.Uint64(b[64:]))
		r.AllocBytes = int64(le.Uint64(b[72:]))
	}
	data := b[size:]
	if r.Goroutines < 1 || r.Calls < 0 || int64(len(data)) != 8*int64(r.Goroutines)*int64(r.Calls) {
		return nil, fmt.Errorf("header says %d goroutine(s) × %d calls but the file holds %d bytes of timings",
			r.Goroutines, r.Calls, len(data))
	}
	r.Timings = make([]int64, len(data)/8)
	for i := range r.Timings {
		r.Timings[i] = int64(le.Uint64(data[8*i:]))
	}
	return r, nil
}

// encodeRaw is the writer's side of the format, for tests.
func encodeRaw(r *RunData) []byte {
	le := binary.LittleEndian
	b := make([]byte, 0, rawHeaderSize+8*len(r.Timings))
	b = append(b, rawMagic...)
	b = le.AppendUint32(b, rawVersion)
	b = le.AppendUint32(b, uint32(r.Goroutines))
	b = le.AppendUint64(b, uint64(r.Calls))
	b = le.AppendUint64(b, uint64(r.Depth))
	b = le.AppendUint64(b, uint64(r.MethodTime))
	b = le.AppendUint64(b, math.Float64bits(r.ClockPairNs))
	b = le.AppendUint64(b, uint64(r.ClockPairIters))
	b = le.AppendUint64(b, uint64(r.Elapsed))
	b = le.AppendUint64(b, uint64(r.Mallocs))
	b = le.AppendUint64(b, uint64(r.AllocBytes))
	for _, t := range r.Timings {
		b = le.AppendUint64(b, uint64(t))
	}
	return b
}

// Load reads r's timings from r.File unless they are loaded already.
func (r *RunData) Load() error {
	if r.Timings != nil {
		return nil
	}
	if r.File == "" {
		return fmt.Errorf("%s run %d of %s: no timings and no raw data file", r.Variant, r.Run, r.Experiment)
	}
	d, err := ReadRaw(r.File)
	if err != nil {
		return err
	}
	if d.Goroutines != r.Goroutines || d.Calls != r.Calls {
		return fmt.Errorf("%s: holds %d goroutine(s) × %d calls, want %d × %d", r.File, d.Goroutines, d.Calls, r.Goroutines, r.Calls)
	}
	r.Timings = d.Timings
	return nil
}

// WarmupCalls is how many of each goroutine's calls a warm-up share discards.
func WarmupCalls(calls int, warmup float64) int {
	n := int(math.Floor(float64(calls) * warmup))
	return min(max(n, 0), calls)
}

// AppendSteady appends the timings after the warm-up share of every goroutine's
// calls to dst and returns the extended slice. The timings must be loaded.
func (r *RunData) AppendSteady(dst []int64, warmup float64) []int64 {
	skip := WarmupCalls(r.Calls, warmup)
	for g := 0; g < r.Goroutines; g++ {
		dst = append(dst, r.Timings[g*r.Calls+skip:(g+1)*r.Calls]...)
	}
	return dst
}
