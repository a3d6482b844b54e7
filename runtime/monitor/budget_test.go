package monitor

import (
	"math"
	"testing"
	"time"
)

func TestCalibrateIsPrivate(t *testing.T) {
	newProbes(t, "test.example/calibrate", 1)
	sink := &recordSink{}
	prev := SetSink(sink)
	defer SetSink(prev)
	before, probes := fineRecords.Load(), len(Snapshot())
	c := calibrate()
	if !(c.CallNs >= 0 && c.RecordNs >= 1) || math.IsInf(c.CallNs+c.RecordNs, 0) || math.IsNaN(c.CallNs+c.RecordNs) {
		t.Errorf("calibration %+v: want finite costs, RecordNs ≥ 1", c)
	}
	if c.Sink != "sync" && c.Sink != "null" {
		t.Errorf("calibration sink %q", c.Sink)
	}
	if len(sink.records)+len(sink.defs) != 0 || fineRecords.Load() != before || len(Snapshot()) != probes {
		t.Errorf("calibration reached the program: %d records, %d definitions, %d counted, %d → %d probes",
			len(sink.records), len(sink.defs), fineRecords.Load()-before, probes, len(Snapshot()))
	}
	t.Logf("fine call +%.0f ns, record +%.0f ns (%s sink), calibration took %v", c.CallNs, c.RecordNs, c.Sink, time.Duration(c.TookNs))
}
