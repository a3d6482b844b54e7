package monitor

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/tigrisgo/tigris/runtime/writer"
)

// portableEnv, set to 1 in a test binary's environment, keeps the monitor on
// its portable goroutine slots (TestMain never calibrates the g layout):
// together with TIGRIS_CLOCK=nanotime, what every architecture but amd64 and
// arm64 runs (TestPortableFallback).
const portableEnv = "TIGRIS_TEST_PORTABLE"

// TestMain calibrates the layout first, as the first registration does in a
// program.
func TestMain(m *testing.M) {
	if os.Getenv(portableEnv) == "1" {
		layoutOnce.Do(func() {}) // as calibrateG fails without getg
	}
	ensureLayout()
	os.Exit(m.Run())
}

// TestPortableFallback runs this package's tests again in a child process
// the way 386, riscv64 and other architectures without getg and without a
// time-stamp counter run the monitor: portable goroutine slots and
// runtime.nanotime as the probes' clock. Cross builds only compile those
// paths (.ci/run vets them for arm64, 386 and riscv64); here they run.
func TestPortableFallback(t *testing.T) {
	if os.Getenv(portableEnv) == "1" {
		if Layout() != "portable" || useTSC || writer.TickSource() != writer.ClockNanotime {
			t.Fatalf("child: layout %s, clock %v; want portable slots and nanotime", Layout(), writer.TickSource())
		}
		return
	}
	if testing.Short() {
		t.Skip("runs the package's tests once more")
	}
	args := []string{"-test.count=1", "-test.timeout=5m"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), portableEnv+"=1", "TIGRIS_CLOCK=nanotime")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests with portable slots and the nanotime clock: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the child printed no PASS:\n%s", out)
	}
}

// TestLayout: on the architectures with getg the calibration must find the
// layout; anything else silently costs a thousand times more per fine call.
func TestLayout(t *testing.T) {
	if !haveGetg {
		t.Skipf("no getg on %s: the portable slots are in use", runtime.GOARCH)
	}
	if os.Getenv(portableEnv) == "1" {
		t.Skipf("%s=1: the portable slots are in use", portableEnv)
	}
	if !glayout.ok {
		t.Fatalf("the goroutine layout was not found on %s/%s (%s): every fine call takes the portable path", runtime.GOOS, runtime.GOARCH, runtime.Version())
	}
	if got, want := *(*uint64)(unsafe.Add(getg(), glayout.goid)), portableGoid(); got != want {
		t.Fatalf("goid at offset %d = %d, runtime.Stack says %d", glayout.goid, got, want)
	}
}

// TestContextPerGoroutine: every goroutine gets its own context, the same one
// on every call, with its own id; a goroutine that starts on a reused g gets a
// fresh context.
func TestContextPerGoroutine(t *testing.T) {
	const n = 200
	var wg sync.WaitGroup
	ctxs := make([]*traceCtx, n)
	ids := make([]uint64, n)
	for round := 0; round < 3; round++ {
		for i := 0; i < n; i++ {
			i := i
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, id, fresh := useContext()
				if c != context() {
					t.Error("two contexts for one goroutine")
				}
				if id != portableGoid() {
					t.Errorf("context of goroutine %d says %d", portableGoid(), id)
				}
				if !fresh {
					t.Error("a new goroutine's context is not fresh")
				}
				ctxs[i], ids[i] = c, id
			}()
		}
		wg.Wait()
		seen := map[uint64]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("goroutine id %d twice", id)
			}
			seen[id] = true
		}
	}
}

// TestPanicking: an exit tells its own panic from a panic that was already
// unwinding when the function was called (from a deferred call), from a
// recovered panic and from Goexit.
func TestPanicking(t *testing.T) {
	if !glayout.ok {
		t.Skip("portable slots: panics are not seen")
	}
	var got []bool
	probe := func(body func()) {
		var c Call
		defer func() { got = append(got, panicking(&c)) }()
		body()
	}
	probe(func() {}) // normal
	func() {
		defer func() { recover() }()
		probe(func() { panic("own") }) // its own panic
	}()
	func() {
		defer func() { recover() }()
		defer func() { probe(func() {}) }() // called while another panic unwinds
		panic("outer")
	}()
	probe(func() { // a panic recovered inside: a normal exit
		defer func() { recover() }()
		panic("recovered")
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		probe(runtime.Goexit) // Goexit is no panic
	}()
	<-done
	want := []bool{false, true, false, false, false}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d: panicking = %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
}

// useContext returns the goroutine's context, its id and whether it was fresh,
// and leaves a trace position behind, which the next goroutine on the same g
// must not see. go:norace as the monitor's own users of contexts.
//
//go:norace
func useContext() (*traceCtx, uint64, bool) {
	c := context()
	fresh := c.ess == 0 && c.trace == 0
	c.ess, c.trace = 3, 7
	return c, c.goid, fresh
}

var ctxSink *traceCtx

// BenchmarkContext is the goroutine-local lookup a fine call makes at entry
// and at exit: through the calibrated g layout and the table keyed by g (what
// tigris does), through the portable slots (runtime.Stack), and, for
// comparison, what a field added to the runtime's g would cost (getg and one
// load at a known offset: the patched runtime of earlier versions, which made
// the standard library recompile and plain plugins refuse to load).
func BenchmarkContext(b *testing.B) {
	b.Run("gfield", func(b *testing.B) {
		if !glayout.ok {
			b.Skip("no g layout here")
		}
		c := context()
		for i := 0; i < b.N; i++ {
			if *(*uint64)(unsafe.Add(getg(), glayout.goid)) == 0 {
				c = nil
			}
			ctxSink = c
		}
	})
	b.Run("g", func(b *testing.B) {
		if !glayout.ok {
			b.Skip("no g layout here")
		}
		for i := 0; i < b.N; i++ {
			ctxSink = context()
		}
	})
	b.Run("portable", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			ctxSink = portableContext()
		}
	})
}

var boolSink bool

// BenchmarkPanicking is the check every exit makes (coarse and fine).
func BenchmarkPanicking(b *testing.B) {
	var c Call
	for i := 0; i < b.N; i++ {
		boolSink = panicking(&c)
	}
}
