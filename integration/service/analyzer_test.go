package service

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// analyzerFiles is a program whose functions run at very different, paced
// rates (Hot 50 times per millisecond tick, each next one ten times less
// often, Rare sleeps) and that prints the analyzer's history as JSON at the
// end. The config is the instrumented tests' (one compiler fingerprint); the
// analysis is set with TIGRIS_* variables.
var analyzerFiles = map[string]string{
	"tigris.yaml": itest.ShopConfig,
	"main.go": `package main

import (
	"encoding/json"
	"os"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
)

func Hot(i int) int  { return i*2 + 1 }
func Warm(i int) int { return i % 7 }
func Mild(i int) int { return i % 11 }
func Cool(i int) int { return i % 13 }
func Cold(i int) int { return i % 17 }
func Rare()          { time.Sleep(2 * time.Millisecond) }

func main() {
	d, err := time.ParseDuration(os.Args[1])
	if err != nil {
		panic(err)
	}
	sum := 0
	for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
		for j := range 50 {
			sum += Hot(j)
		}
		for j := range 5 {
			sum += Warm(j)
		}
		if i%2 == 0 {
			sum += Mild(i)
		}
		if i%20 == 0 {
			sum += Cool(i)
		}
		if i%100 == 0 {
			sum += Cold(i)
		}
		if i%500 == 0 {
			Rare()
		}
		time.Sleep(time.Millisecond)
	}
	json.NewEncoder(os.Stdout).Encode(analyzer.History())
	os.Stderr.WriteString(string(rune('0' + sum%10)))
}
`,
}

// TestAnalyzerUnderLoad runs the two-phase analyzer in a real instrumented
// program: every cycle's selection follows the filter ("most frequent" picks
// Hot, never the rare or expensive ones), only selected functions write fine
// records, and the budget controller holds the measured record rate to a
// budget chosen so that it must lower the sampling rate.
func TestAnalyzerUnderLoad(t *testing.T) {
	dir := itest.NewModule(t, analyzerFiles)
	bin := filepath.Join(dir, "app"+itest.ExeSuffix())
	itest.Tigris(t, dir, nil, "go", "build", "-o", bin, ".")

	run := func(budget, trace string) []analyzer.Cycle {
		t.Helper()
		out, code := itest.Run(t, dir, []string{
			"GOMAXPROCS=2", "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=on", "TIGRIS_CRITERIA=most frequent",
			"TIGRIS_METRICS=frequent=count", "TIGRIS_INTERVAL=1s", "TIGRIS_WINDOW=0s", "TIGRIS_SAMPLING=100%",
			"TIGRIS_BUDGET=" + budget, "TIGRIS_WRITER=async", "TIGRIS_OUT=" + trace,
		}, bin, "5500ms")
		if code != 0 {
			t.Fatalf("exit status %d\n%s", code, out)
		}
		js, _, _ := strings.Cut(out, "\n")
		var h []analyzer.Cycle
		if err := json.Unmarshal([]byte(js), &h); err != nil {
			t.Fatalf("history: %v\n%s", err, out)
		}
		if len(h) < 4 {
			t.Fatalf("%d cycles in 5.5 s at an interval of 1 s", len(h))
		}
		return h
	}

	// A first run measures what the budget must work with: the calibrated cost
	// and how often the selection runs. The budget of the second run allows
	// all the unsampled fine calls and 5 % of the records. The second run
	// calibrates again, and on a busy machine its costs and call rate may differ
	// from the first run's several times over; 5 % leaves room for that.
	h := run("50%", filepath.Join(dir, "calibrate.tgr"))
	first := h[len(h)-1].Budget
	if first == nil || first.FineCallsPerSec <= 0 || first.Cost.RecordNs <= 0 {
		t.Fatalf("no budget decision with a selection: %+v", h[len(h)-1])
	}
	capacity := first.FineCallsPerSec * (first.Cost.CallNs + 0.05*first.Cost.RecordNs)
	budget := capacity / (float64(first.Procs) * 1e9)
	t.Logf("%.0f fine calls/s at %.1f + %.1f ns per record: budget %.5f%%",
		first.FineCallsPerSec, first.Cost.CallNs, first.Cost.RecordNs, 100*budget)

	trace := filepath.Join(dir, "budget.tgr")
	h = run(fmt.Sprint(budget), trace)
	selected := map[string]bool{}
	lowered := false
	for i, cy := range h {
		if cy.Err != "" {
			t.Fatalf("cycle %d failed: %s", cy.Seq, cy.Err)
		}
		hot := false
		for _, sig := range cy.Selected {
			selected[sig] = true
			hot = hot || strings.Contains(sig, ".Hot(")
			for _, not := range []string{".Rare(", ".Cold(", ".Cool(", ".main("} {
				if strings.Contains(sig, not) {
					t.Errorf("cycle %d selected %s: not among the most frequent", cy.Seq, sig)
				}
			}
			if r := strings.Join(cy.Reasons[sig], "; "); !strings.Contains(r, "frequent: most") {
				t.Errorf("cycle %d selected %s for %q", cy.Seq, sig, r)
			}
		}
		if !hot {
			t.Errorf("cycle %d did not select Hot: %v", cy.Seq, cy.Selected)
		}
		b := cy.Budget
		if b == nil {
			t.Fatalf("cycle %d: no budget decision", cy.Seq)
		}
		if b.Action != "floor" && b.Share > budget*(1+1e-9) {
			t.Errorf("cycle %d: predicted share %.5f%% over the budget %.5f%% (%s)", cy.Seq, 100*b.Share, 100*budget, b.Action)
		}
		lowered = lowered || b.Rate < 0.9
		if i == 0 {
			continue
		}
		// What the previous decision led to, measured: the records made since,
		// against the calls it expected at its rate. Twice allows for the window
		// edges and scheduling; an ignored rate would give three times or more.
		prev := h[i-1].Budget
		if want := prev.FineCallsPerSec * prev.Rate; b.RecordsPerSec > 2*want+100 {
			t.Errorf("cycle %d: %.0f records/s after a decision for %.0f calls/s at %.1f%%",
				cy.Seq, b.RecordsPerSec, prev.FineCallsPerSec, 100*prev.Rate)
		}
		if share := b.RecordsPerSec * b.Cost.RecordNs / (float64(b.Procs) * 1e9); prev.Action != "floor" && share > 2*budget {
			t.Errorf("cycle %d: records took %.5f%% of CPU for a budget of %.5f%%", cy.Seq, 100*share, 100*budget)
		}
	}
	if !lowered {
		var rates []string
		for _, cy := range h {
			rates = append(rates, fmt.Sprintf("%.1f%% (%s)", 100*cy.Budget.Rate, cy.Budget.Action))
		}
		t.Errorf("the sampling rate never went below 90 %% for a budget of 5 %% of the records: %s", strings.Join(rates, ", "))
	}

	// Phase 2 traces only what phase 1 chose.
	r, err := writer.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	probes := map[uint32]string{}
	records := 0
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch it.Kind {
		case writer.KindProbe:
			probes[it.Probe.ID] = it.Probe.Signature
		case writer.KindRecord:
			records++
			sig := probes[it.Record.Probe]
			ok := false
			for s := range selected {
				ok = ok || strings.Contains(sig, s) || strings.Contains(s, strings.TrimPrefix(sig, "func "))
			}
			if !ok {
				t.Fatalf("a record of %q, which no cycle selected (%v)", sig, selected)
			}
		}
	}
	if records == 0 {
		t.Error("no fine records")
	}
}
