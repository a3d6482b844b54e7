package evaluation

import (
	"slices"
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
	// life (start, warm-up, window, shutdown), from its rusage.
	ServerCPUSeconds float64 `json:"serverCPUSeconds"`
	// WindowCPUSeconds is the CPU time the service's threads ran during the
	// measured window (the scheduler's counters), CPUPerRequestUs that over
	// the window's requests: the evaluation's measure of cost.
	WindowCPUSeconds float64 `json:"windowCPUSeconds"`
	CPUPerRequestUs  float64 `json:"cpuPerRequestUs"`
	// GCs are the service's garbage collections in the window (it runs
	// with GODEBUG=gctrace=1 and they are counted from its stderr).
	GCs int64 `json:"gcs"`
	// Position is where the run came in its round, in percent of the
	// round (0: first).
	Position int `json:"position"`
	// ServiceCPUs are the CPUs the service was allowed on (/proc's
	// Cpus_allowed_list), "" where the system does not say.
	ServiceCPUs string `json:"serviceCPUs,omitempty"`
	// MonitoredCalls are the probes' completed calls in the window; Records the
	// fine records produced in it (written, queued or dropped), Dropped those
	// the writer dropped. TraceBytes is the size of the trace file at the end.
	MonitoredCalls uint64 `json:"monitoredCalls,omitempty"`
	// TimedCalls are those of MonitoredCalls whose time was taken (every
	// fine call, one coarse call in N).
	TimedCalls uint64 `json:"timedCalls,omitempty"`
	Records    uint64 `json:"records,omitempty"`
	Dropped    uint64 `json:"dropped,omitempty"`
	TraceBytes int64  `json:"traceBytes,omitempty"`
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
	// WindowStart is when the measured window's load started.
	WindowStart time.Time `json:"windowStart,omitzero"`
	// SwitchAt is when a shift configuration's load switched pattern.
	SwitchAt time.Time `json:"switchAt,omitzero"`
	// Truth is a truth configuration's ground truth: per filter text, the
	// functions the offline analyzer selects in most analysis windows of the
	// run's measured window (groundTruth); TruthWindows every window's
	// selections; TruthFunctions the number of functions called in them.
	Truth          map[string][]string `json:"truth,omitempty"`
	TruthWindows   []TruthWindow       `json:"truthWindows,omitempty"`
	TruthFunctions int                 `json:"truthFunctions,omitempty"`
	LoadAvg        float64             `json:"loadAvg"` // 1-minute load average before the run
	// OtherCPUSeconds is the CPU time the rest of the machine used during the
	// run: all processes but the service and this one (Linux only; 0
	// elsewhere). On a quiet machine it is near 0.
	OtherCPUSeconds float64 `json:"otherCPUSeconds"`
}

// Cycle summarizes one analysis cycle.
type Cycle struct {
	At         time.Time `json:"at"`
	Candidates int       `json:"candidates"`
	Selected   int       `json:"selected"`
	Added      int       `json:"added"`
	Removed    int       `json:"removed"`
	// Functions are the functions selected (signatures).
	Functions []string `json:"functions,omitempty"`
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
	// CPUPerRequestUs is the median over the runs of the service's CPU time
	// per request in the measured window, CPULo and CPUHi its 95 %
	// bootstrap interval. CPURatio is it over the no-monitoring median, with
	// its interval (both samples resampled); 0 without a no-monitoring
	// configuration.
	CPUPerRequestUs float64 `json:"cpuPerRequestUs"`
	CPULo           float64 `json:"cpuLo"`
	CPUHi           float64 `json:"cpuHi"`
	CPURatio        float64 `json:"cpuRatio,omitempty"`
	CPURatioLo      float64 `json:"cpuRatioLo,omitempty"`
	CPURatioHi      float64 `json:"cpuRatioHi,omitempty"`
	// PairedRatio is the CPU per request against no monitoring's run of
	// the same round (every configuration of a round runs the same load):
	// the median over the rounds of the log of the ratio, exponentiated,
	// with its 95 % bootstrap interval over the rounds (PairedRatioLo,
	// PairedRatioHi); PairedRounds is the number of rounds both ran. A
	// round's speed cancels in its ratio, so the interval is narrower than
	// CPURatio's. 0 without a no-monitoring configuration.
	PairedRatio   float64 `json:"pairedRatio,omitempty"`
	PairedRatioLo float64 `json:"pairedRatioLo,omitempty"`
	PairedRatioHi float64 `json:"pairedRatioHi,omitempty"`
	PairedRounds  int     `json:"pairedRounds,omitempty"`
	// MedianThroughput is the median req/s over the runs, with its 95 %
	// bootstrap interval.
	MedianThroughput float64 `json:"medianThroughput"`
	ThroughputLo     float64 `json:"throughputLo"`
	ThroughputHi     float64 `json:"throughputHi"`
	// ModelLo and ModelHi are the extra CPU per request the cost model
	// predicts (µs, hot and cold per-call costs); ModelOK says whether that
	// range meets the measured extra's interval.
	ModelLo float64 `json:"modelLoUs"`
	ModelHi float64 `json:"modelHiUs"`
	ModelOK bool    `json:"modelOK"`
	// TimedPerRequest are the monitored calls per request whose time was
	// taken; RecordsPerRequest the fine records.
	TimedPerRequest   float64 `json:"timedPerRequest"`
	RecordsPerRequest float64 `json:"recordsPerRequest"`
	// GCsPerKRequest are the service's garbage collections per 1,000
	// requests in the windows.
	GCsPerKRequest float64 `json:"gcsPerKRequest"`
	// Quality is the selections' against the ground truth (two-phase
	// configurations of the module scope, when the plan has the truth).
	Quality         *Quality `json:"quality,omitempty"`
	CallsPerRequest float64  `json:"monitoredCallsPerRequest"`
	RecordsPerSec   float64  `json:"recordsPerSecond"`
	DroppedShare    float64  `json:"droppedShare"`
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
	// ScopeProbes are the probes each scope's build has (Scopes).
	ScopeProbes map[string]int `json:"scopeProbes,omitempty"`
	Scopes      []Scope        `json:"scopes,omitempty"`
	// Pinning says where the service and the load generator ran.
	Pinning string    `json:"pinning,omitempty"`
	Costs   CostModel `json:"costs"`
	// EarlyCPU and LateCPU are the median CPU per request of the runs in
	// the first and in the second half of their rounds, each over its
	// configuration's median: an order effect shows as a difference.
	EarlyCPU float64         `json:"earlyCPU,omitempty"`
	LateCPU  float64         `json:"lateCPU,omitempty"`
	Configs  []ConfigSummary `json:"configs"`
	Runs     []RunResult     `json:"runs"`
}

// Summarize fills in sum.Configs from sum.Runs: per configuration the mean
// throughput with its 95 % interval and its ratio to no monitoring, the
// medians of CPU per request and throughput with bootstrap intervals, the
// cost model's prediction and the selections' quality.
func Summarize(sum *Summary) {
	sum.Configs = nil
	if sum.Costs.Source == "" {
		sum.Costs = DefaultCosts()
	}
	var ref *ConfigSummary
	cpuOf := map[string][]float64{}
	cpuByRound := map[string]map[int]float64{} // per configuration, per round
	for _, c := range sum.Plan.Configs {
		cs := ConfigSummary{Config: c}
		var reqs, calls, timed, records, dropped, errs, secs, gcs float64
		var cycles, selected, cands int
		var tps []float64
		for _, r := range sum.Runs {
			if r.Config != c.Name {
				continue
			}
			cs.Runs++
			cs.PerRun = append(cs.PerRun, r.Throughput)
			tps = append(tps, r.Throughput)
			x := r.CPUPerRequestUs
			if all := r.Requests + r.WarmupRequests; x <= 0 && all > 0 && r.ServerCPUSeconds > 0 {
				// A run of an earlier version, without the window's CPU:
				// its rusage over its whole life.
				x = 1e6 * r.ServerCPUSeconds / float64(all)
			}
			if x > 0 {
				cpuOf[c.Name] = append(cpuOf[c.Name], x)
				if cpuByRound[c.Name] == nil {
					cpuByRound[c.Name] = map[int]float64{}
				}
				cpuByRound[c.Name][r.Run] = x
			}
			reqs += float64(r.Requests)
			calls += float64(r.MonitoredCalls)
			timed += float64(r.TimedCalls)
			records += float64(r.Records)
			dropped += float64(r.Dropped)
			errs += float64(r.Errors)
			secs += r.Seconds
			gcs += float64(r.GCs)
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
		}
		if cs.Runs == 0 {
			continue
		}
		m := moments.Of(cs.PerRun)
		cs.Throughput, cs.CI95, cs.StdDev = m.Mean(), m.CI95(), m.StdDev()
		seed := sum.Plan.Seed + uint64(len(sum.Configs))
		cs.MedianThroughput, cs.ThroughputLo, cs.ThroughputHi = moments.MedianCI95(tps, seed)
		if xs := cpuOf[c.Name]; len(xs) > 0 {
			cs.CPUPerRequestUs, cs.CPULo, cs.CPUHi = moments.MedianCI95(xs, seed)
		}
		if reqs > 0 {
			cs.CallsPerRequest = calls / reqs
			cs.TimedPerRequest = timed / reqs
			cs.RecordsPerRequest = records / reqs
			cs.ErrorShare = errs / reqs
			cs.GCsPerKRequest = 1000 * gcs / reqs
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
		if q, ok := judge(sum, c); ok {
			cs.Quality = &q
		}
		sum.Configs = append(sum.Configs, cs)
		if c.Kind == KindNone {
			ref = &sum.Configs[len(sum.Configs)-1]
		}
	}
	sum.EarlyCPU, sum.LateCPU = orderEffect(sum.Runs, cpuOf)
	if ref == nil || ref.Throughput <= 0 {
		return
	}
	// Calls per request of each scope with its probes on, for the cost of
	// the same calls with them off.
	phase1Calls := map[string]float64{}
	for _, cs := range sum.Configs {
		if cs.Kind == KindPhase1 {
			phase1Calls[cs.Scope] = cs.CallsPerRequest
		}
	}
	for i := range sum.Configs {
		cs := &sum.Configs[i]
		cs.Ratio, cs.RatioCI = moments.RatioCI95(cs.Throughput, cs.CI95, ref.Throughput, ref.CI95)
		cs.Overhead = 1 - cs.Ratio
		if len(cpuOf[cs.Name]) == 0 || len(cpuOf[ref.Name]) == 0 {
			continue
		}
		cs.CPURatio, cs.CPURatioLo, cs.CPURatioHi = moments.RatioOfMediansCI95(cpuOf[cs.Name], cpuOf[ref.Name], sum.Plan.Seed+uint64(i))
		var rounds []int
		for round := range cpuByRound[cs.Name] {
			rounds = append(rounds, round)
		}
		slices.Sort(rounds)
		var xs, ys []float64
		for _, round := range rounds {
			if y, ok := cpuByRound[ref.Name][round]; ok {
				xs, ys = append(xs, cpuByRound[cs.Name][round]), append(ys, y)
			}
		}
		if len(xs) > 0 {
			cs.PairedRatio, cs.PairedRatioLo, cs.PairedRatioHi, cs.PairedRounds = moments.PairedRatioCI95(xs, ys, sum.Plan.Seed+uint64(i))
		}
		switch cs.Kind {
		case KindNone:
			cs.ModelOK = true
			continue
		case KindOff, KindQuery:
			cs.ModelLo, cs.ModelHi = sum.Costs.Predict(cs.CallsPerRequest, cs.TimedPerRequest, cs.RecordsPerRequest, phase1Calls[cs.Scope])
		default:
			cs.ModelLo, cs.ModelHi = sum.Costs.Predict(cs.CallsPerRequest, cs.TimedPerRequest, cs.RecordsPerRequest, 0)
		}
		base := ref.CPUPerRequestUs
		lo, hi := (cs.CPURatioLo-1)*base, (cs.CPURatioHi-1)*base
		cs.ModelOK = cs.ModelHi >= lo && cs.ModelLo <= hi
	}
}

// orderEffect is the median CPU per request of the runs early and late in
// their rounds, each over its configuration's median (Summary.EarlyCPU,
// LateCPU); 0 without runs of configurations that ran more than once.
func orderEffect(runs []RunResult, cpuOf map[string][]float64) (early, late float64) {
	var e, l []float64
	for _, r := range runs {
		xs := cpuOf[r.Config]
		if len(xs) < 2 || r.CPUPerRequestUs <= 0 {
			continue
		}
		x := r.CPUPerRequestUs / moments.Median(xs)
		if r.Position < 50 {
			e = append(e, x)
		} else {
			l = append(l, x)
		}
	}
	if len(e) == 0 || len(l) == 0 {
		return 0, 0
	}
	return moments.Median(e), moments.Median(l)
}
