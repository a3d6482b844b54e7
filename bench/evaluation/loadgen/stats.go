package loadgen

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/tigrisgo/tigris/internal/sorted"
)

// Stats describes a run so far (in Progress) or a finished run (from Run).
type Stats struct {
	// Elapsed is the time since the first user started.
	Elapsed time.Duration
	// Requests is the number of completed requests: answered, or failed without an
	// answer. Requests abandoned because the caller's context ended are not counted.
	Requests int64
	// Errors is the number of requests without a 2xx answer.
	Errors int64
	// Status counts the requests by HTTP status of the answer; 0 counts the requests
	// that got no complete answer (connection errors, timeouts, a body cut short).
	// The error statuses are the keys outside 200..299.
	Status map[int]int64
	// LastError describes the latest request that got no complete answer, or whose
	// 2xx answer could not be decoded ("" if none).
	LastError string
	// Throughput is Requests per second of Elapsed.
	Throughput float64
	// CurrentThroughput is the requests per second completed during the last Interval
	// (in Progress; in the final statistics, the last Interval before the end).
	CurrentThroughput float64
	// Latency summarizes the time from sending a request to reading its whole answer.
	Latency Latency
	// Endpoints holds the statistics per endpoint, keyed "METHOD /path/{param}".
	Endpoints map[string]EndpointStats

	// Users is the number of active users when the statistics were taken (0 at the
	// end of a run); MinUsers and MaxUsers are the fewest and most users active at
	// once during the run.
	Users, MinUsers, MaxUsers int
	// UsersStarted counts the users started during the run, per pattern name.
	UsersStarted map[string]int64
}

// EndpointStats describes the requests to one endpoint.
type EndpointStats struct {
	Requests int64
	Errors   int64 // without a 2xx answer
	Latency  Latency
}

// Latency summarizes a latency distribution. Percentiles come from a log-linear
// histogram and are within about 1.6% of the true value; Mean and Max are exact.
type Latency struct {
	Mean, P50, P90, P95, P99, Max time.Duration
}

// ErrorsByStatus returns the error counts by status (0: no answer).
func (s Stats) ErrorsByStatus() map[int]int64 {
	out := map[int]int64{}
	for code, n := range s.Status {
		if code < 200 || code > 299 {
			out[code] = n
		}
	}
	return out
}

// String summarizes s on one line.
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests in %.1fs (%.1f/s", s.Requests, s.Elapsed.Seconds(), s.Throughput)
	if s.CurrentThroughput > 0 {
		fmt.Fprintf(&b, ", now %.1f/s", s.CurrentThroughput)
	}
	fmt.Fprintf(&b, "), %d errors", s.Errors)
	if errs := s.ErrorsByStatus(); len(errs) > 0 {
		b.WriteString(" (")
		for i, code := range sorted.Keys(errs) {
			if i > 0 {
				b.WriteString(", ")
			}
			if code == 0 {
				fmt.Fprintf(&b, "%d no answer", errs[code])
			} else {
				fmt.Fprintf(&b, "%d× %d", errs[code], code)
			}
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; latency p50 %v p95 %v p99 %v max %v; users %d (%d..%d)",
		round(s.Latency.P50), round(s.Latency.P95), round(s.Latency.P99), round(s.Latency.Max),
		s.Users, s.MinUsers, s.MaxUsers)
	return b.String()
}

// WriteTable writes the per-endpoint statistics as an aligned table, busiest first.
func (s Stats) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "endpoint\trequests\terrors\tmean\tp50\tp95\tp99\tmax\t")
	keys := sorted.KeysFunc(s.Endpoints, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.Endpoints[b].Requests, s.Endpoints[a].Requests), cmp.Compare(a, b))
	})
	row := func(name string, n, errs int64, l Latency) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\t%v\t%v\t%v\t%v\t\n", name, n, errs,
			round(l.Mean), round(l.P50), round(l.P95), round(l.P99), round(l.Max))
	}
	for _, k := range keys {
		e := s.Endpoints[k]
		row(k, e.Requests, e.Errors, e.Latency)
	}
	row("all", s.Requests, s.Errors, s.Latency)
	return tw.Flush()
}

// round shortens d for display.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}

// histogram is a log-linear latency histogram: values below subCount nanoseconds have
// a bucket each; above, every power of two is split into subCount buckets, so a
// bucket is at most 1/subCount of its values wide.
type histogram struct {
	counts [histBuckets]int64
	n      int64
	sum    time.Duration
	max    time.Duration
}

const (
	subBits     = 6
	subCount    = 1 << subBits
	histBuckets = subCount + (64-subBits)*subCount
)

func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return subCount + shift*subCount + int(v>>shift) - subCount
}

// bucketMid returns the middle of bucket i.
func bucketMid(i int) uint64 {
	if i < subCount {
		return uint64(i)
	}
	shift := (i - subCount) / subCount
	top := uint64(subCount + (i-subCount)%subCount)
	lo := top << shift
	return lo + (uint64(1)<<shift)/2
}

func (h *histogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// quantile returns the value at quantile q in (0, 1], never above the maximum.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n) + 0.5)
	rank = max(1, min(rank, h.n))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketMid(i)), h.max)
		}
	}
	return h.max
}

func (h *histogram) latency() Latency {
	if h.n == 0 {
		return Latency{}
	}
	return Latency{
		Mean: h.sum / time.Duration(h.n),
		P50:  h.quantile(0.50),
		P90:  h.quantile(0.90),
		P95:  h.quantile(0.95),
		P99:  h.quantile(0.99),
		Max:  h.max,
	}
}

// recorder collects request outcomes from every user. It is safe for concurrent use.
type recorder struct {
	mu        sync.Mutex
	all       histogram
	errors    int64
	status    map[int]int64
	endpoints map[string]*endpointRec
	lastError string
}

type endpointRec struct {
	hist   histogram
	errors int64
}

func newRecorder() *recorder {
	return &recorder{status: map[int]int64{}, endpoints: map[string]*endpointRec{}}
}

// record adds one completed request: its endpoint, status (0: no answer, with err)
// and latency.
func (r *recorder) record(endpoint string, status int, latency time.Duration, err error) {
	failed := status < 200 || status > 299
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all.add(latency)
	r.status[status]++
	e := r.endpoints[endpoint]
	if e == nil {
		e = &endpointRec{}
		r.endpoints[endpoint] = e
	}
	e.hist.add(latency)
	if failed {
		r.errors++
		e.errors++
	}
	if err != nil {
		r.lastError = endpoint + ": " + err.Error()
	}
}

// count returns the number of requests recorded.
func (r *recorder) count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.all.n
}

// snapshot returns the request statistics; the caller fills in the rest.
func (r *recorder) snapshot(elapsed time.Duration) Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Stats{
		Elapsed:   elapsed,
		Requests:  r.all.n,
		Errors:    r.errors,
		Status:    maps.Clone(r.status),
		LastError: r.lastError,
		Latency:   r.all.latency(),
		Endpoints: make(map[string]EndpointStats, len(r.endpoints)),
	}
	if elapsed > 0 {
		s.Throughput = float64(s.Requests) / elapsed.Seconds()
	}
	for k, e := range r.endpoints {
		s.Endpoints[k] = EndpointStats{Requests: e.hist.n, Errors: e.errors, Latency: e.hist.latency()}
	}
	return s
}
