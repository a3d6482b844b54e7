package export

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/export/otlptest"
)

// balanced checks that every record read is accounted for: a span sent, not
// delivered or pending, or a record held.
func balanced(t *testing.T, what string, st Stats) {
	t.Helper()
	if sum := st.SpansSent + st.SpansFailed + st.SpansPending + st.RecordsHeld; st.Records != sum {
		t.Errorf("%s: %d records read, but %d sent + %d not delivered + %d pending + %d held = %d",
			what, st.Records, st.SpansSent, st.SpansFailed, st.SpansPending, st.RecordsHeld, sum)
	}
}

// TestStatsAddUp: a live run stopped while a trace's root has not returned
// holds that trace's records and says so (Records = sent + not delivered +
// pending + held); the next run sends them, counting them as carried in, not
// as read again; a run after that read and sent nothing itself, whatever the
// checkpoint's totals. No lock file stays behind any run.
func TestStatsAddUp(t *testing.T) {
	dir := t.TempDir()
	// The first goroutine's root never returns: its records wait for it.
	calls := simulate(rand.New(rand.NewPCG(21, 22)), 3, 400, true)
	simFile(t, filepath.Join(dir, "app.tgr"), calls, 0, 1, nil)
	r := otlptest.New(t)
	o := testOptions(r, dir)
	o.Hold = time.Hour // no part of the open trace goes during the test
	var last atomic.Pointer[Stats]
	o.OnStats = func(s Stats) { last.Store(&s) }
	first := runFor(t, o, 0, func() bool {
		s := last.Load()
		return s != nil && s.Records == int64(len(calls)) && s.SpansPending == 0 && s.SpansSent+s.RecordsHeld == s.Records
	})
	balanced(t, "live run", first)
	if first.Records != int64(len(calls)) || first.RecordsHeld == 0 || first.SpansSent == first.Records || first.Earlier != nil {
		t.Errorf("live run: %+v; want every record read, some held in the open trace, nothing earlier", first)
	}
	if n, _ := r.Count(); int64(n) != first.SpansSent {
		t.Errorf("%d spans received, %d counted as sent", n, first.SpansSent)
	}
	noLockFile(t, o.Checkpoint)

	o.Once, o.OnStats = true, nil
	second, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	balanced(t, "second run", second)
	e, run := second.Earlier, second.ThisRun()
	if e == nil || e.Records != first.Records || e.SpansSent != first.SpansSent || e.RecordsHeld != first.RecordsHeld || e.SpansPending != 0 ||
		run.Records != 0 || run.SpansSent != first.RecordsHeld || run.RecordsHeld != 0 || run.Requests == 0 {
		t.Errorf("second run: %+v, earlier %+v; want no new records, the %d held ones carried in and sent", run, e, first.RecordsHeld)
	}
	if n, dups := r.Count(); n != len(calls) || dups != 0 {
		t.Errorf("after the second run: %d spans (%d twice) for %d records", n, dups, len(calls))
	}
	noLockFile(t, o.Checkpoint)

	third, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	balanced(t, "third run", third)
	if run := third.ThisRun(); run.Records != 0 || run.SpansSent != 0 || run.Requests != 0 || third.Earlier.Records != int64(len(calls)) {
		t.Errorf("third run: %+v; want nothing read or sent by it, and %d records earlier", run, len(calls))
	}
	noLockFile(t, o.Checkpoint)
}

// noLockFile: the checkpoint's lock file goes when the shipper stops.
func noLockFile(t *testing.T, checkpoint string) {
	t.Helper()
	if _, err := os.Stat(checkpoint + ".lock"); !os.IsNotExist(err) {
		t.Errorf("%s.lock left behind (%v)", checkpoint, err)
	}
}

// TestThisRun: every counter that adds up over runs is taken off, the state
// of now is kept.
func TestThisRun(t *testing.T) {
	var now, earlier Stats
	nv, ev := reflect.ValueOf(&now).Elem(), reflect.ValueOf(&earlier).Elem()
	for i := 0; i < nv.NumField(); i++ {
		switch f := nv.Field(i); f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(5)
			ev.Field(i).SetInt(2)
		case reflect.Uint64:
			f.SetUint(5)
			ev.Field(i).SetUint(2)
		}
	}
	now.Earlier = &earlier
	run := now.ThisRun()
	rv := reflect.ValueOf(run)
	state := map[string]bool{"Streams": true, "Ended": true, "SpansPending": true, "RecordsHeld": true}
	for i := 0; i < rv.NumField(); i++ {
		name, f := rv.Type().Field(i).Name, rv.Field(i)
		var v int64
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			v = f.Int()
		case reflect.Uint64:
			v = int64(f.Uint())
		default:
			continue
		}
		if want := map[bool]int64{true: 5, false: 3}[state[name]]; v != want {
			t.Errorf("ThisRun().%s = %d, want %d", name, v, want)
		}
	}
}
