package realcode

import (
	"encoding/json"
	"math"
	"slices"
	"sort"

	"github.com/tigrisgo/tigris/internal/moments"
)

// Interval is a ratio of times (a variant's over the plain build's) with its
// 95 % confidence interval. It is estimated on logarithms: Ratio is
// exp(mean), Lo and Hi are exp(mean ∓ t·s/√n) for the n per-round log
// ratios, Student's t with n−1 degrees of freedom (moments.Critical95). Lo
// and Hi are NaN below two rounds.
type Interval struct {
	Ratio  float64 `json:"ratio"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Rounds int     `json:"rounds"`
}

// Holds1 reports whether the interval holds 1: no difference shown.
func (iv Interval) Holds1() bool { return !(iv.Lo > 1 || iv.Hi < 1) }

// MarshalJSON writes NaN as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	f := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	return json.Marshal(map[string]any{"ratio": f(iv.Ratio), "lo": f(iv.Lo), "hi": f(iv.Hi), "rounds": iv.Rounds})
}

// intervalOf is the Interval of per-round log ratios.
func intervalOf(logs []float64) Interval {
	if len(logs) == 0 {
		return Interval{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	m := moments.Of(logs)
	iv := Interval{Ratio: math.Exp(m.Mean()), Lo: math.NaN(), Hi: math.NaN(), Rounds: len(logs)}
	if len(logs) >= 2 {
		h := m.CI95()
		iv.Lo, iv.Hi = math.Exp(m.Mean()-h), math.Exp(m.Mean()+h)
	}
	return iv
}

// Summary is what the table shows.
type Summary struct {
	Modules []ModuleSummary `json:"modules"`
	// Overall is per variant the geometric mean over the modules (each
	// module weighs the same whatever its number of benchmarks), with its
	// interval across the rounds in which every module ran it.
	Overall map[string]Interval `json:"overall"`
}

// ModuleSummary is one module's row.
type ModuleSummary struct {
	Name string `json:"name"`
	// Benchmarks are the benchmarks measured, each with the median of its
	// plain times and its own ratio per variant.
	Benchmarks []BenchSummary `json:"benchmarks"`
	// Variants is per variant the geometric mean over the benchmarks, with
	// its interval across rounds.
	Variants map[string]Interval `json:"variants"`
}

// BenchSummary is one benchmark.
type BenchSummary struct {
	Name     string              `json:"name"`
	PlainNs  float64             `json:"plainNsPerOp"` // median over rounds
	Variants map[string]Interval `json:"variants"`
}

// Summarize computes the summary of r's runs. In every round, a variant's
// time per operation of each benchmark is divided by the plain build's of
// the same round (pairing the runs that ran closest in time and load); the
// logarithms of these ratios are averaged over the module's benchmarks (the
// geometric mean of the round), and the rounds' means give the estimate and
// a t-interval. Benchmarks missing from either run of a round are left out of
// that round.
func Summarize(r *Results) *Summary {
	type key struct {
		round           int
		module, variant string
	}
	runs := map[key]map[string]float64{}
	for _, run := range r.Runs {
		if run.Error == "" {
			runs[key{run.Round, run.Module, run.Variant}] = run.NsPerOp
		}
	}
	s := &Summary{Overall: map[string]Interval{}}
	// perRound[variant][round][module] is the module's mean log ratio.
	perRound := map[string]map[int]map[string]float64{}
	for _, m := range r.Plan.Modules {
		ms := ModuleSummary{Name: m.Name, Variants: map[string]Interval{}}
		names := map[string]bool{}
		plainTimes := map[string][]float64{}
		for round := range r.Plan.Rounds {
			for name, x := range runs[key{round, m.Name, "plain"}] {
				names[name] = true
				plainTimes[name] = append(plainTimes[name], x)
			}
		}
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		benchLogs := map[string]map[string][]float64{} // variant → benchmark → per-round logs
		for _, v := range r.Plan.Variants {
			if v.Name == "plain" {
				continue
			}
			benchLogs[v.Name] = map[string][]float64{}
			var logs []float64
			for round := range r.Plan.Rounds {
				plain, vr := runs[key{round, m.Name, "plain"}], runs[key{round, m.Name, v.Name}]
				if plain == nil || vr == nil {
					continue
				}
				var sum float64
				n := 0
				for _, name := range sorted {
					x, y := vr[name], plain[name]
					if x > 0 && y > 0 {
						l := math.Log(x / y)
						sum += l
						n++
						benchLogs[v.Name][name] = append(benchLogs[v.Name][name], l)
					}
				}
				if n == 0 {
					continue
				}
				logs = append(logs, sum/float64(n))
				if perRound[v.Name] == nil {
					perRound[v.Name] = map[int]map[string]float64{}
				}
				if perRound[v.Name][round] == nil {
					perRound[v.Name][round] = map[string]float64{}
				}
				perRound[v.Name][round][m.Name] = sum / float64(n)
			}
			ms.Variants[v.Name] = intervalOf(logs)
		}
		for _, name := range sorted {
			b := BenchSummary{Name: name, PlainNs: moments.Median(plainTimes[name]), Variants: map[string]Interval{}}
			for v, byBench := range benchLogs {
				b.Variants[v] = intervalOf(byBench[name])
			}
			ms.Benchmarks = append(ms.Benchmarks, b)
		}
		s.Modules = append(s.Modules, ms)
	}
	for _, v := range r.Plan.Variants {
		if v.Name == "plain" {
			continue
		}
		var logs []float64
		rounds := make([]int, 0, len(perRound[v.Name]))
		for round := range perRound[v.Name] {
			rounds = append(rounds, round)
		}
		slices.Sort(rounds)
		for _, round := range rounds {
			byModule := perRound[v.Name][round]
			if len(byModule) != len(r.Plan.Modules) {
				continue // a module's run failed in this round
			}
			var sum float64
			for _, l := range byModule {
				sum += l
			}
			logs = append(logs, sum/float64(len(byModule)))
		}
		s.Overall[v.Name] = intervalOf(logs)
	}
	return s
}
