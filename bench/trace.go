package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// TraceCount says how many of a run's monitored calls reached its output: for
// tigris the records in the trace file, for the OpenTelemetry peer the spans
// its exporter received. Written + Lost should be Expected; a difference means
// records went missing without being counted.
type TraceCount struct {
	Unit     string `json:"unit"`     // "records" or "spans"
	Expected int64  `json:"expected"` // monitored calls the run made (sampling 1: one record or span each)
	Written  int64  `json:"written"`  // records read from the trace file, spans exported
	Lost     int64  `json:"lost"`     // records the writer reported lost, spans the batch processor dropped
	Gaps     int64  `json:"gaps,omitempty"`
}

// Add accumulates c into t (for a configuration's total over its runs).
func (t *TraceCount) Add(c *TraceCount) {
	t.Unit = c.Unit
	t.Expected += c.Expected
	t.Written += c.Written
	t.Lost += c.Lost
	t.Gaps += c.Gaps
}

// LostShare is Lost as a share of Expected, or 0.
func (t *TraceCount) LostShare() float64 {
	if t == nil || t.Expected == 0 {
		return 0
	}
	return float64(t.Lost) / float64(t.Expected)
}

// Unaccounted is how many expected records are neither written nor counted as
// lost.
func (t *TraceCount) Unaccounted() int64 {
	if t == nil {
		return 0
	}
	return t.Expected - t.Written - t.Lost
}

// countTrace reads the tigris trace file at path (and the files rotation made
// from it) and counts its call records, the records its loss records say were
// lost and the damaged stretches the reader skipped.
func countTrace(path string, expected int64) (*TraceCount, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("the run wrote no trace file: %w", err)
	}
	r, err := writer.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace %s: %w", path, err)
	}
	defer r.Close()
	for {
		if _, err := r.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("reading trace %s: %w", path, err)
		}
	}
	st := r.Stats()
	return &TraceCount{Unit: "records", Expected: expected, Written: st.Records, Lost: int64(st.Lost), Gaps: st.Gaps}, nil
}

// spanCounts finds the OpenTelemetry example's exit line in a run's output,
//
//	moobench-otel: spans started=N exported=M dropped=D
//
// and returns it as a TraceCount, or nil when there is none.
func spanCounts(out []byte) *TraceCount {
	for _, line := range strings.Split(string(out), "\n") {
		_, rest, ok := strings.Cut(line, "spans started=")
		if !ok {
			continue
		}
		c := TraceCount{Unit: "spans"}
		fields := strings.Fields("started=" + rest)
		for _, f := range fields {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil
			}
			switch k {
			case "started":
				c.Expected = n
			case "exported":
				c.Written = n
			case "dropped":
				c.Lost = n
			}
		}
		return &c
	}
	return nil
}
