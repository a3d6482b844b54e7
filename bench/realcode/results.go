package realcode

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/tigrisgo/tigris/bench"
)

// Results are everything one run of a plan measured; results.json holds them.
type Results struct {
	Workload string            `json:"workload"`
	Plan     Plan              `json:"plan"`
	Env      bench.Environment `json:"env"`
	// Tigris is the tigris that built the instrumented variants: its
	// version line and, where it runs from a checkout, the commit
	// (git describe --always --dirty).
	TigrisVersion string    `json:"tigrisVersion,omitempty"`
	TigrisCommit  string    `json:"tigrisCommit,omitempty"`
	Started       time.Time `json:"started"`
	Finished      time.Time `json:"finished"`
	// LoadAvgEnd is the 1-minute load average when the plan ended (Env
	// holds the one at its start).
	LoadAvgEnd float64 `json:"loadAvgEnd"`
	// Notes say where the plan departed from what it asks for: a setting
	// this tigris does not know, a build that failed.
	Notes   []string       `json:"notes,omitempty"`
	Modules []ModuleResult `json:"modules"`
	Runs    []Run          `json:"runs"`
	// Summary is Summarize's answer, written for readers of the file;
	// ReadResults's callers summarize the runs again.
	Summary *Summary `json:"summary,omitempty"`
}

// ModuleResult is what preparing one module found.
type ModuleResult struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Version string `json:"version"`
	// Probes are the functions each tigris build instruments, and of how
	// many matched, as tigris match counts them over the whole module.
	Probes map[Build]Probes `json:"probes,omitempty"`
	// BuildErrors are the builds that failed, with their output.
	BuildErrors map[Build]string `json:"buildErrors,omitempty"`
	// Config is the tigris.yaml tigris init wrote.
	Config string `json:"config,omitempty"`
	// Shares are where the module's CPU time is in a CPU profile of the
	// plain build's benchmarks, against the default build's probes; nil
	// when the plan profiles nothing or profiling failed (ProfileError).
	Shares       *Shares `json:"shares,omitempty"`
	ProfileError string  `json:"profileError,omitempty"`
}

// Probes counts a build's instrumented functions.
type Probes struct {
	Instrumented int `json:"instrumented"`
	Functions    int `json:"functions"`
}

// Run is one variant of one module in one round: one test process per
// benchmark expression of the module.
type Run struct {
	Round    int    `json:"round"`
	Module   string `json:"module"`
	Variant  string `json:"variant"`
	Position int    `json:"position"` // in the round's order for the module
	// NsPerOp is every benchmark's time per operation, by full name.
	NsPerOp map[string]float64 `json:"nsPerOp"`
	Seconds float64            `json:"seconds"`
	Error   string             `json:"error,omitempty"`
}

// WriteResults writes r as indented JSON to name.
func WriteResults(name string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o666)
}

// ReadResults reads results.json.
func ReadResults(name string) (*Results, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if r.Workload != Workload {
		return nil, fmt.Errorf("%s: results of workload %q, not %s", name, r.Workload, Workload)
	}
	return &r, nil
}
