package monitor

import (
	"sync"
	"unsafe"
)

// The running goroutine, read without patching the runtime.
//
// The monitor keeps a trace context per goroutine (fine records) and tells a
// panicking exit from a normal one (coarse and fine). Both need the running
// goroutine's g: its id (g.goid) and its innermost panic (g._panic, and that
// panic's argument, which Goexit leaves nil). The standard library is
// compiled unchanged, so the offsets of these fields are not known when the
// monitor is compiled: calibrateG finds them once, at init, in the g of
// goroutines whose id and panic it knows, and accepts an offset only when it
// fits every one of them. getg (g_amd64.s, g_arm64.s) is the one piece of
// assembly; everything else is loads at the calibrated offsets.
//
// When anything does not fit (an architecture without getg, a toolchain whose
// layout defeats the checks) the monitor falls back to its portable slots:
// correct but about a thousand times slower per fine call, and blind to panics
// (they count as normal exits). Layout() says which.

// glayout holds the calibrated offsets; ok is false when the portable slots
// are in use. It is written once, at the first registration, before any probe
// can run.
var glayout struct {
	ok      bool
	goid    uintptr // offset of the goroutine id in g
	panic   uintptr // offset of the innermost *_panic in g
	argType uintptr // offset of the panic argument's type word in _panic
}

// gScan is how many bytes of a g calibration reads. Every g of every Go
// release is larger; the fields tigris needs sit in its first 200 bytes.
const gScan = 256

// panicScan is how many bytes of a _panic calibration reads: its argument is
// among the first words.
const panicScan = 32

// ensureLayout calibrates once, at the first registration (not in init: the
// tigris command links this package too, and every toolexec process would
// pay for it).
func ensureLayout() { layoutOnce.Do(func() { glayout.ok = calibrateG() }) }

var layoutOnce sync.Once

// Layout describes how the monitor finds the running goroutine: "g" (the
// calibrated fast path) or "portable".
func Layout() string {
	if glayout.ok {
		return "g"
	}
	return "portable"
}

// calibrateG finds the offsets; false leaves the portable slots in use.
func calibrateG() (ok bool) {
	if !haveGetg {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	goid, found := goidOffset()
	if !found {
		return false
	}
	// Two panics with distinct arguments must agree on the offsets.
	p1, a1, found1 := panicOffsets()
	p2, a2, found2 := panicOffsets()
	if !found1 || !found2 || p1 != p2 || a1 != a2 {
		return false
	}
	glayout.goid, glayout.panic, glayout.argType = goid, p1, a1
	return true
}

// goidOffset returns the one offset at which the g of four goroutines (and of
// the calling one) holds the goroutine id that runtime.Stack prints.
func goidOffset() (uintptr, bool) {
	var cands []uintptr
	for off := uintptr(0); off < gScan; off += 8 {
		cands = append(cands, off)
	}
	keep := func(gp unsafe.Pointer, id uint64) {
		out := cands[:0]
		for _, off := range cands {
			if *(*uint64)(unsafe.Add(gp, off)) == id {
				out = append(out, off)
			}
		}
		cands = out
	}
	keep(getg(), portableGoid())
	for i := 0; i < 4 && len(cands) > 0; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			keep(getg(), portableGoid())
		}()
		<-done
	}
	if len(cands) != 1 {
		return 0, false
	}
	return cands[0], true
}

// panicSentinel is what calibration panics with: a pointer, so that the
// panic argument's data word is its address, which nothing else holds.
type panicSentinel struct{ _ [8]byte }

// panicOffsets panics on a new goroutine and, in a deferred call, finds the
// word of g that has come to point at a _panic on this goroutine's stack whose
// argument is the sentinel. It returns that word's offset in g and the offset
// of the argument's type word in _panic.
func panicOffsets() (gOff, argOff uintptr, found bool) {
	type result struct {
		gOff, argOff uintptr
		found        bool
	}
	done := make(chan result, 1)
	go func() {
		gp := getg()
		var before [gScan / 8]uintptr
		for i := range before {
			before[i] = *(*uintptr)(unsafe.Add(gp, uintptr(i)*8))
		}
		sentinel := new(panicSentinel)
		defer func() {
			var res result
			var marker byte // on this deferred call's frame
			here := uintptr(unsafe.Pointer(&marker))
			for i := range before {
				off := uintptr(i) * 8
				p := *(*unsafe.Pointer)(unsafe.Add(gp, off))
				// The _panic lives in gopanic's frame, a little above this
				// deferred call on the same stack: only such words are read
				// through.
				if before[i] != 0 || uintptr(p) <= here || uintptr(p)-here > 1<<16 {
					continue
				}
				for a := uintptr(0); a+16 <= panicScan; a += 8 {
					typ := *(*uintptr)(unsafe.Add(p, a))
					data := *(*unsafe.Pointer)(unsafe.Add(p, a+8))
					if typ != 0 && data == unsafe.Pointer(sentinel) {
						if res.found { // two candidates: ambiguous
							res.found = false
							done <- res
							recover()
							return
						}
						res = result{off, a, true}
					}
				}
			}
			recover()
			done <- res
		}()
		panic(sentinel)
	}()
	r := <-done
	return r.gOff, r.argOff, r.found
}
