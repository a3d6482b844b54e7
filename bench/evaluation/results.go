package evaluation

import (
	"time"

	"github.com/tigrisgo/tigris/bench"
	"github.com/tigrisgo/tigris/internal/moments"
)

// RunResult is what one run of one configuration measured.
type RunResult struct {
	Config string `json:"config"`
	Run    int    `json:"run"`
	// Throughput is the completed requests per second of the measured window.
	Throughput float64 `json:"throughput"`
	Requests   int64   `json:"requests"`
	Seconds    float64 `json:"seconds"`
	Errors     int64   `json:"errors"`   // answered with a status outside 2xx
	NoAnswer   int64   `json:"noAnswer"` // no complete answer
	P50Ms      float64 `json:"p50Ms"`
	P99Ms      float64 `json:"p99Ms"`
	// WarmupRequests were completed before the window.
	WarmupRequests int64 `json:"warmupRequests"`
	// ServerCPUSeconds is the service's user and system CPU time over its whole
	// life (start, warm-up, window, shutdown).
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	// MonitoredCalls are the probes' completed calls in the window; Records the
	// fine records produced in it (written, queued or dropped), Dropped those
	// the writer dropped. TraceBytes is the size of the trace file at the end.
	MonitoredCalls uint64 `json:"monitoredCalls,omitempty"`
	Records        uint64 `json:"records,omitempty"`
	Dropped        uint64 `json:"dropped,omitempty"`
	TraceBytes     int64  `json:"traceBytes,omitempty"`
	// QueryTuples are the calls that reached the query configuration's
	// query in the window (after its pushed-down predicates), QueryRows the
	// rows it produced.
	QueryTuples uint64 `json:"queryTuples,omitempty"`
	QueryRows   uint64 `json:"queryRows,omitempty"`
	// CyclesBefore counts the analysis cycles before the window; Cycles are
	// those during it.
	CyclesBefore int     `json:"cyclesBefore,omitempty"`
	Cycles       []Cycle `json:"cycles,omitempty"`
	// Selected is the selection in force at the end of the window.
	Selected []string `json:"selected,omitempty"`
	LoadAvg  float64  `json:"loadAvg"` // 1-minute load average before the run
	// OtherCPUSeconds is the CPU time the rest of the machine used during the
	// run: all processes but the service and this one (Linux only; 0
	// elsewhere). On a quiet machine it is near 0.
	OtherCPUSeconds float64 `json:"otherCPUSeconds"`
}

// Cycle summarizes one analysis cycle.
type Cycle struct {
	Candidates int `json:"candidates"`
	Selected   int `json:"selected"`
	Added      int `json:"added"`
	Removed    int `json:"removed"`
}

// ConfigSummary is one configuration over its runs.
type ConfigSummary struct {
	Config
	Runs       int       `json:"runs"`
	PerRun     []float64 `json:"throughputPerRun"`
	Throughput float64   `json:"throughput"` // mean req/s
	CI95       float64   `json:"ci95"`
	StdDev     float64   `json:"stddev"`
	// Ratio is Throughput over the no-monitoring mean, with its 95 % interval;
	// Overhead is 1 − Ratio. All three are left out (0) when the plan has no
	// no-monitoring configuration.
	Ratio    float64 `json:"ratio,omitempty"`
	RatioCI  float64 `json:"ratioCI95,omitempty"`
	Overhead float64 `json:"overhead,omitempty"`
	// CPUPerRequestUs is the service's CPU time per completed request over its
	// whole life (warm-up and window), a measure less sensitive to the load
	// generator sharing the machine.
	CPUPerRequestUs float64 `json:"cpuPerRequestUs"`
	CallsPerRequest float64 `json:"monitoredCallsPerRequest"`
	RecordsPerSec   float64 `json:"recordsPerSecond"`
	DroppedShare    float64 `json:"droppedShare"`
	// Selected is the mean number of functions selected per cycle in the
	// windows, of Candidates; SelectedFuncs every function selected at the end
	// of a window, with in how many runs.
	Selected      float64        `json:"selected,omitempty"`
	Candidates    float64        `json:"candidates,omitempty"`
	SelectedFuncs map[string]int `json:"selectedFunctions,omitempty"`
	ErrorShare    float64        `json:"errorShare"`
	NoAnswer      int64          `json:"noAnswer"`
}

// Summary is the report of an evaluation, summary.json.
type Summary struct {
	Workload string              `json:"workload"`
	Plan     Plan                `json:"plan"`
	Env      bench.Environment   `json:"env"`
	Started  time.Time           `json:"started"`
	Ended    time.Time           `json:"ended"`
	Builds   []bench.BuildResult `json:"builds"`
	Complete bool                `json:"complete"` // every planned run ran
	Probes   int                 `json:"probes,omitempty"`
	Configs  []ConfigSummary     `json:"configs"`
	Runs     []RunResult         `json:"runs"`
}

// Summarize fills in sum.Configs from sum.Runs: per configuration the mean
// throughput with its 95 % interval, and its ratio to no monitoring.
func Summarize(sum *Summary) {
	sum.Configs = nil
	var ref *ConfigSummary
	for _, c := range sum.Plan.Configs {
		cs := ConfigSummary{Config: c}
		var cpu, reqs, calls, records, dropped, errs, secs float64
		var cycles, selected, cands int
		for _, r := range sum.Runs {
			if r.Config != c.Name {
				continue
			}
			cs.Runs++
			cs.PerRun = append(cs.PerRun, r.Throughput)
			cpu += r.ServerCPUSeconds
			reqs += float64(r.Requests)
			calls += float64(r.MonitoredCalls)
			records += float64(r.Records)
			dropped += float64(r.Dropped)
			errs += float64(r.Errors)
			secs += r.Seconds
			cs.NoAnswer += r.NoAnswer
			for _, cy := range r.Cycles {
				cycles++
				selected += cy.Selected
				cands += cy.Candidates
			}
			if len(r.Selected) > 0 {
				if cs.SelectedFuncs == nil {
					cs.SelectedFuncs = map[string]int{}
				}
				for _, f := range r.Selected {
					cs.SelectedFuncs[f]++
				}
			}
			allReqs := float64(r.Requests + r.WarmupRequests)
			if allReqs > 0 {
				cs.CPUPerRequestUs += 1e6 * r.ServerCPUSeconds / allReqs
			}
		}
		if cs.Runs == 0 {
			continue
		}
		m := moments.Of(cs.PerRun)
		cs.Throughput, cs.CI95, cs.StdDev = m.Mean(), m.CI95(), m.StdDev()
		cs.CPUPerRequestUs /= float64(cs.Runs)
		if reqs > 0 {
			cs.CallsPerRequest = calls / reqs
			cs.ErrorShare = errs / reqs
		}
		if secs > 0 {
			cs.RecordsPerSec = records / secs
		}
		if records > 0 {
			cs.DroppedShare = dropped / records
		}
		if cycles > 0 {
			cs.Selected = float64(selected) / float64(cycles)
			cs.Candidates = float64(cands) / float64(cycles)
		}
		sum.Configs = append(sum.Configs, cs)
		if c.Kind == KindNone {
			ref = &sum.Configs[len(sum.Configs)-1]
		}
	}
	if ref == nil {
		return
	}
	if ref.Throughput <= 0 {
		return
	}
	for i := range sum.Configs {
		cs := &sum.Configs[i]
		cs.Ratio, cs.RatioCI = moments.RatioCI95(cs.Throughput, cs.CI95, ref.Throughput, ref.CI95)
		cs.Overhead = 1 - cs.Ratio
	}
}
