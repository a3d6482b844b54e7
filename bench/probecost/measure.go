package probecost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Run is one program run under callgrind: a binary built one way, run in one
// mode.
type Run struct {
	Name string   // "fastjson default", in tables
	Bin  string   // the executable
	Args []string // its arguments
	Dir  string   // where it runs ("": the caller's directory)
	Env  []string // added to the environment (TIGRIS_MODE=..., ...)
	// Op is the function one call of which is one operation of the
	// benchmark: the counts are per call of it. Where Op is "", Ops is
	// the number of operations the dump holds.
	Op  string
	Ops int64
	// Measured are the prefixes of the measured code's function names
	// ("github.com/valyala/fastjson."): their own cost is the
	// instrumented functions' (with the probe code inlined into them).
	Measured []string
}

// Callgrind runs r under valgrind's callgrind with the cache and branch
// simulators in dir and returns its steady state: the last dump that
// --dump-every-bb=dumpEvery cut (the one before the program's end), or the
// whole run when it was too short to be cut or dumpEvery is 0. Reading the last whole dump
// measures a program in its steady state (phase 1 has looked, statistics
// are allocated), not while it starts.
func Callgrind(ctx context.Context, valgrind string, r Run, dir string, dumpEvery int64) (*Profile, error) {
	base := filepath.Join(dir, fileName(r.Name)+".callgrind")
	args := []string{"--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes", "--callgrind-out-file=" + base}
	if dumpEvery > 0 {
		args = append(args, fmt.Sprintf("--dump-every-bb=%d", dumpEvery))
	}
	args = append(args, r.Bin)
	cmd := exec.CommandContext(ctx, valgrind, append(args, r.Args...)...)
	cmd.Dir = r.Dir
	// Callgrind cannot follow Go's preemption signals.
	cmd.Env = append(append(os.Environ(), "GODEBUG=asyncpreemptoff=1"), r.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("callgrind %s: %v\n%s", r.Name, err, tail(out.String(), 2000))
	}
	return ReadProfileFile(LastDump(base))
}

// fileName is name with every character but letters, digits, '.' and '-'
// replaced by '-'.
func fileName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, name)
}

// LastDump returns the name of the last whole dump callgrind wrote for
// --callgrind-out-file=base (base.1, base.2, ...): the last numbered one, or
// with three or more the one before it, since the last may hold the end of
// the program's steady state (a benchmark's loop ending) and then few
// operations; base when there is none.
func LastDump(base string) string {
	dumps, _ := filepath.Glob(base + ".*")
	var ns []int
	for _, d := range dumps {
		var i int
		if _, err := fmt.Sscanf(d[len(base)+1:], "%d", &i); err == nil && fmt.Sprint(i) == d[len(base)+1:] {
			ns = append(ns, i)
		}
	}
	if len(ns) == 0 {
		return base
	}
	sort.Ints(ns)
	n := ns[len(ns)-1]
	if len(ns) >= 3 {
		n = ns[len(ns)-2]
	}
	return fmt.Sprintf("%s.%d", base, n)
}

// tail is the end of a program's output, at most n bytes of it.
func tail(out string, n int) string {
	if len(out) <= n {
		return out
	}
	return "…" + out[len(out)-n:]
}

// Counts are a part of the program's events per operation.
type Counts struct {
	Ir   float64 // instructions
	L1   float64 // first-level misses: I1mr + D1mr + D1mw
	D1   float64 // of them data: D1mr + D1mw
	LL   float64 // last-level misses: ILmr + DLmr + DLmw
	Bm   float64 // mispredicted branches: Bcm + Bim
	Call float64 // calls into the part's functions
}

// Cycles is KCachegrind's cycle estimate: Ir + 10 Bm + 10 L1m + 100 LLm.
func (c Counts) Cycles() float64 { return c.Ir + 10*c.Bm + 10*c.L1 + 100*c.LL }

func (c Counts) plus(d Counts) Counts {
	return Counts{c.Ir + d.Ir, c.L1 + d.L1, c.D1 + d.D1, c.LL + d.LL, c.Bm + d.Bm, c.Call + d.Call}
}

func (c Counts) minus(d Counts) Counts {
	return Counts{c.Ir - d.Ir, c.L1 - d.L1, c.D1 - d.D1, c.LL - d.LL, c.Bm - d.Bm, c.Call - d.Call}
}

func (c Counts) div(n float64) Counts {
	return Counts{c.Ir / n, c.L1 / n, c.D1 / n, c.LL / n, c.Bm / n, c.Call / n}
}

// The parts a probed call's cost is split into, in table order.
const (
	PartModule = "instrumented functions' own code"
	PartStart  = "monitor.Start"
	PartEnd    = "(*Call).End"
	PartStats  = "statistics (addCall, procPin)"
	PartClock  = "clock reads"
	PartDraw   = "random draw (cheaprand)"
	PartFine   = "other monitor code (fine path, looks)"
	PartStack  = "stack growth (morestack)"
	PartOther  = "the rest (runtime, GC, benchmark)"
)

// Parts are the parts in table order.
var Parts = []string{PartModule, PartStart, PartEnd, PartStats, PartClock, PartDraw, PartFine, PartStack, PartOther}

const (
	monitorPkg = "github.com/tigrisgo/tigris/runtime/monitor."
	writerPkg  = "github.com/tigrisgo/tigris/runtime/writer."
)

// part names the part of a function of the program whose measured code's
// names begin with one of measured.
func part(fn string, measured []string) string {
	for _, m := range measured {
		if strings.HasPrefix(fn, m) {
			return PartModule
		}
	}
	switch {
	case fn == monitorPkg+"Start":
		return PartStart
	case fn == monitorPkg+"(*Call).End":
		return PartEnd
	case fn == monitorPkg+"(*Probe).addCall", fn == "runtime.procPin", fn == "runtime.procUnpin",
		fn == monitorPkg+"phase1Soon", fn == monitorPkg+"(*Probe).ownStats", fn == monitorPkg+"newStripes":
		return PartStats
	case strings.HasPrefix(fn, monitorPkg+"ticks"), strings.HasPrefix(fn, writerPkg+"rdtsc"), fn == writerPkg+"TSC":
		// The time-stamp counter, the probes' clock wherever the writer
		// finds it invariant (under valgrind too); runtime.nanotime is
		// the benchmarks' own clock and stays in the rest.
		return PartClock
	case fn == "runtime.cheaprand":
		return PartDraw
	case strings.HasPrefix(fn, monitorPkg), strings.HasPrefix(fn, writerPkg):
		return PartFine
	case strings.HasPrefix(fn, "runtime.morestack"), fn == "runtime.newstack", fn == "runtime.copystack",
		strings.HasPrefix(fn, "runtime.adjust"), fn == "runtime.stackalloc", fn == "runtime.stackfree":
		return PartStack
	}
	return PartOther
}

// Breakdown is one run's counts per operation, by part.
type Breakdown struct {
	Run   Run
	Ops   int64             // operations in the dump read
	Total Counts            // the whole program
	Parts map[string]Counts // by part
	// Fn are the measured code's functions, by name; every probe function
	// too (Start, End, addCall, ...).
	Fn map[string]Counts
}

// Analyze splits p's counts into r's parts, per operation.
func Analyze(r Run, p *Profile) (*Breakdown, error) {
	ops := r.Ops
	if r.Op != "" {
		ops = p.Calls[r.Op]
	}
	if ops <= 0 {
		return nil, fmt.Errorf("%s: no call of %s in the dump: not the operation, or the dump too short", r.Name, r.Op)
	}
	ix := func(names ...string) []int {
		var is []int
		for _, n := range names {
			if i := p.Event(n); i >= 0 {
				is = append(is, i)
			}
		}
		return is
	}
	ir, l1, d1, ll, bm := ix("Ir"), ix("I1mr", "D1mr", "D1mw"), ix("D1mr", "D1mw"), ix("ILmr", "DLmr", "DLmw"), ix("Bcm", "Bim")
	if len(ir) == 0 {
		return nil, fmt.Errorf("%s: the dump counts no instructions", r.Name)
	}
	sum := func(c []int64, is []int) float64 {
		var s int64
		for _, i := range is {
			s += c[i]
		}
		return float64(s)
	}
	counts := func(c []int64) Counts {
		return Counts{Ir: sum(c, ir), L1: sum(c, l1), D1: sum(c, d1), LL: sum(c, ll), Bm: sum(c, bm)}
	}
	b := &Breakdown{Run: r, Ops: ops, Parts: map[string]Counts{}, Fn: map[string]Counts{}}
	n := float64(ops)
	names := map[string]bool{}
	for fn := range p.Self {
		names[fn] = true
	}
	for fn := range p.Calls {
		names[fn] = true
	}
	for fn := range names {
		c := Counts{Call: float64(p.Calls[fn])}
		if s := p.Self[fn]; s != nil {
			c = counts(s)
			c.Call = float64(p.Calls[fn])
		}
		c = c.div(n)
		pt := part(fn, r.Measured)
		b.Parts[pt] = b.Parts[pt].plus(c)
		if pt != PartOther {
			b.Fn[fn] = c
		}
	}
	for _, c := range b.Parts {
		b.Total = b.Total.plus(c)
	}
	return b, nil
}

// Per returns the part's counts per operation, fn's when part names a
// function of Fn.
func (b *Breakdown) Per(part string) Counts {
	if c, ok := b.Parts[part]; ok {
		return c
	}
	return b.Fn[part]
}

// ProbedCalls is how many calls of probed functions an operation makes:
// the calls of monitor.Start in a run that starts every probed call
// (coarse with phase 1's budget off).
func (b *Breakdown) ProbedCalls() float64 { return b.Fn[monitorPkg+"Start"].Call }

// Starts, Timed and ClockReads are per operation: calls of Start (probes on:
// timed or drawn and left untimed), calls timed (addCall, or fine ends), and
// clock reads.
func (b *Breakdown) Starts() float64 { return b.Fn[monitorPkg+"Start"].Call }

// Timed is the calls whose statistics an exit updated per operation.
func (b *Breakdown) Timed() float64 { return b.Fn[monitorPkg+"(*Probe).addCall"].Call }

// ClockReads is the probes' clock reads per operation.
func (b *Breakdown) ClockReads() float64 {
	return b.Fn[monitorPkg+"ticksAndG.abi0"].Call + b.Fn[writerPkg+"rdtsc.abi0"].Call
}

// ModuleCalls are the calls into the measured code's functions per
// operation: more than plain's where a probe kept the compiler from
// inlining a callee.
func (b *Breakdown) ModuleCalls() float64 { return b.Parts[PartModule].Call }

// NewCalls lists the measured code's functions that b calls more often than
// base per operation (inlined in base, or called more), most first.
func (b *Breakdown) NewCalls(base *Breakdown) []string {
	type fc struct {
		fn string
		d  float64
	}
	var l []fc
	for fn, c := range b.Fn {
		if part(fn, b.Run.Measured) != PartModule {
			continue
		}
		if d := c.Call - base.Fn[fn].Call; d > 0.01 {
			l = append(l, fc{fn, d})
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].d > l[j].d || l[i].d == l[j].d && l[i].fn < l[j].fn })
	var s []string
	for _, e := range l {
		s = append(s, fmt.Sprintf("%s +%.2f", e.fn, e.d))
	}
	return s
}
