package writer

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// bracket is a nanotime reading between two Ticks reads; width says how far
// apart they were.
type bracket struct {
	tick, width, ns int64
}

// readBracket takes a bracket, retrying while one is wider than 20 µs of
// ticks (the goroutine was preempted between the reads).
func readBracket() bracket {
	for {
		a := Ticks()
		n := nanotime()
		b := Ticks()
		if w := b - a; w >= 0 && float64(w)*NanosPerTick() < 20_000 {
			return bracket{tick: a + w/2, width: w, ns: n}
		}
	}
}

// clockTolerance is what the trace format promises for durations measured
// with the tick clock, against runtime.nanotime.
const clockTolerance = 0.01

// checkIntervals compares intervals measured in ticks with the same intervals
// by nanotime: each within clockTolerance (plus the brackets' widths, which
// bound where between its two reads a bracket's instant lies) and all of them
// together as a ratio. No interval's length is asserted, only agreement.
func checkIntervals(t *testing.T, pairs [][2]bracket) {
	t.Helper()
	var sumTicks, sumNs float64
	k := NanosPerTick()
	for _, p := range pairs {
		dt := float64(p[1].tick-p[0].tick) * k
		dn := float64(p[1].ns - p[0].ns)
		slack := float64(p[0].width+p[1].width) * k
		if math.Abs(dt-dn) > clockTolerance*dn+slack {
			t.Errorf("interval of %.0f ns by nanotime is %.0f ns by the %v clock (slack %.0f ns)", dn, dt, TickSource(), slack)
		}
		sumTicks += dt
		sumNs += dn
	}
	if r := sumTicks / sumNs; math.Abs(r-1) > clockTolerance {
		t.Errorf("%d intervals: ticks/nanotime = %.5f, want within %.0f %% of 1", len(pairs), r, 100*clockTolerance)
	} else {
		t.Logf("%d intervals, %.1f ms in all: ticks/nanotime = %.6f (%v clock, %d ticks/s)", len(pairs), sumNs/1e6, r, TickSource(), TickHz())
	}
}

// TestClockAcrossGoroutineMigration: goroutines, more than there are Ps, take
// a bracket, sleep or yield so that they resume wherever the scheduler puts
// them (another thread, another CPU), and take another. Every interval by the
// tick clock agrees with nanotime.
func TestClockAcrossGoroutineMigration(t *testing.T) {
	const goroutines, each = 8, 50
	pairs := make([][2]bracket, goroutines*each)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		g := g
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				a := readBracket()
				if i%2 == 0 {
					time.Sleep(200 * time.Microsecond)
				} else {
					for j := 0; j < 10; j++ {
						runtime.Gosched()
					}
				}
				pairs[g*each+i] = [2]bracket{a, readBracket()}
			}
		}()
	}
	wg.Wait()
	checkIntervals(t, pairs)
}

// TestTicksToNanos: a Ticks reading converts to about the nanotime reading
// taken at the same instant, within the clock tolerance of the time since the
// calibration's base.
func TestTicksToNanos(t *testing.T) {
	for i := 0; i < 100; i++ {
		b := readBracket()
		got := TicksToNanos(b.tick)
		slack := clockTolerance*float64(b.ns-clockBase.ns) + float64(b.width)*NanosPerTick() + 1000
		if math.Abs(float64(got-b.ns)) > slack {
			t.Fatalf("TicksToNanos(%d) = %d, nanotime %d (slack %.0f ns)", b.tick, got, b.ns, slack)
		}
	}
	if !useTSC {
		if TickSource() != ClockNanotime || NanosPerTick() != 1 || TickHz() != 0 {
			t.Errorf("nanotime clock: source %v, %v ns per tick, %d Hz", TickSource(), NanosPerTick(), TickHz())
		}
		return
	}
	if hz := TickHz(); hz < 1e8 || hz > 1e11 {
		t.Errorf("time-stamp counter at %d Hz", hz)
	}
}

func TestChooseClock(t *testing.T) {
	if chooseTSC("nanotime") {
		t.Error("TIGRIS_CLOCK=nanotime still chose the time-stamp counter")
	}
	if os.Getenv("TIGRIS_CLOCK") == "nanotime" && (useTSC || TickSource() != ClockNanotime || TickHz() != 0) {
		t.Errorf("TIGRIS_CLOCK=nanotime: the %v clock at %d Hz is in use", TickSource(), TickHz())
	}
	if !haveTSC && chooseTSC("") {
		t.Error("the time-stamp counter chosen where there is none")
	}
	t.Logf("this machine: %v clock", TickSource())
}

// TestNanotimeClock runs the clock tests and the writers' round trips again
// in a child process with TIGRIS_CLOCK=nanotime: the clock of every
// architecture without an invariant time-stamp counter, where Ticks is
// runtime.nanotime and the conversions are the identity.
func TestNanotimeClock(t *testing.T) {
	if os.Getenv("TIGRIS_CLOCK") == "nanotime" {
		t.Skip("this is the nanotime run")
	}
	if testing.Short() {
		t.Skip("runs tests once more")
	}
	cmd := exec.Command(os.Args[0], "-test.count=1", "-test.v", "-test.run=^(TestClock|TestTick|TestChooseClock|TestWriterRoundTrip|TestEncoderRoundTrip|TestLinkRoundTrip)")
	cmd.Env = append(os.Environ(), "TIGRIS_CLOCK=nanotime")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTickTimesConverted") {
		t.Fatalf("the clock tests with TIGRIS_CLOCK=nanotime: %v\n%s", err, out)
	}
}

// TestTickTimesConverted: a writer told that record times are ticks writes
// nanoseconds, names the clock in the header, and keeps durations within the
// clock tolerance of nanotime's.
func TestTickTimesConverted(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) {
			opt := testOptions(t)
			opt.TickTimes = true
			w, err := wr.new(opt)
			if err != nil {
				t.Fatal(err)
			}
			w.Define(ProbeDef{ID: 1})
			const n = 20
			pairs := make([][2]bracket, n)
			for i := range pairs {
				a := readBracket()
				for nanotime()-a.ns < 100_000 {
				}
				pairs[i] = [2]bracket{a, readBracket()}
				w.Write(&Record{Probe: 1, EOI: uint32(i), TIn: pairs[i][0].tick, TOut: pairs[i][1].tick})
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := readFile(t, opt.Path)
			if len(got.headers) != 1 || len(got.records) != n {
				t.Fatalf("%d headers, %d records", len(got.headers), len(got.records))
			}
			h := got.headers[0]
			if h.Minor < 1 || h.ClockSource != TickSource() || (useTSC && h.TickHz == 0) {
				t.Errorf("header %d.%d names clock %v at %d Hz; want %v", h.Major, h.Minor, h.ClockSource, h.TickHz, TickSource())
			}
			for i, r := range got.records {
				// The async writer keeps a queue per P, so a producer that moved
				// between Ps may see its records written out of order: pair each
				// with its brackets by EOI.
				if int(r.EOI) >= n {
					t.Fatalf("record %d has EOI %d", i, r.EOI)
				}
				p := pairs[r.EOI]
				slack := float64(p[0].width+p[1].width)*NanosPerTick() + 2
				dn := float64(p[1].ns - p[0].ns)
				if d := float64(r.TOut - r.TIn); math.Abs(d-dn) > clockTolerance*dn+slack {
					t.Errorf("record %d lasts %.0f ns in the file, %.0f ns by nanotime", r.EOI, d, dn)
				}
				if off := math.Abs(float64(r.TIn - p[0].ns)); off > clockTolerance*float64(p[0].ns-clockBase.ns)+slack+1000 {
					t.Errorf("record %d starts %.0f ns away from nanotime", r.EOI, off)
				}
			}
		})
	}
}

// TestHeaderMinor0: a header of format 1.0 carries no clock; it reads as
// nanotime.
func TestHeaderMinor0(t *testing.T) {
	e := newEncoder(1024)
	h := Header{Major: 1, Minor: 0, Stream: 7, Host: "h", Binary: "b", ClockSource: ClockTSC, TickHz: 99}
	e.header(&h)
	// Cut the two clock fields a 1.1 encoder appended: a 1.0 body ends at binary.
	body := e.buf[chunkHeaderLen:]
	body = body[:len(body)-2]
	body[1] -= 2
	got := readBytes(append(fileMagic[:], chunkOf(body)...))
	if got.err != nil || len(got.headers) != 1 {
		t.Fatalf("err %v, %d headers", got.err, len(got.headers))
	}
	if g := got.headers[0]; g.Minor != 0 || g.ClockSource != ClockNanotime || g.TickHz != 0 || g.Binary != "b" {
		t.Errorf("header %+v", g)
	}
}
