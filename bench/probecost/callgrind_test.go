package probecost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dump in callgrind's format with name compression, a recursion level
// ('2), inlined code (fi/fe) and calls whose inclusive cost lines must not
// count as the caller's own.
const sampleDump = `# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir D1mr D1mw DLmr Bcm
summary: 1000 7 3 1 5

ob=(1) /tmp/x.test
fl=(1) parser.go
fn=(1) example.com/p.Parse
10 20 1
+1 5 0 1
cfn=(2) example.com/p.value
calls=3 40
* 300 2 0 1 1
fi=(2) monitor/abi.go
7 4
fe=(1)
cfn=(3) github.com/tigrisgo/tigris/runtime/monitor.Start
calls=3 100
* 60

fn=(2)
40 90 2 1 0 2
cfn=(2) example.com/p.value'2
calls=1 40
* 50 1

fn=(2) example.com/p.value'2
40 30 1 0 1 1

fn=(3)
100 60
`

func TestReadProfile(t *testing.T) {
	p, err := ReadProfile(strings.NewReader(sampleDump))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Events, " "); got != "Ir D1mr D1mw DLmr Bcm" {
		t.Errorf("events %q", got)
	}
	self := map[string][]int64{
		"example.com/p.Parse":                              {29, 1, 1, 0, 0},  // 20+5+4 (the inlined line counts), no call's cost
		"example.com/p.value":                              {120, 3, 1, 1, 3}, // the level '2 folds into value
		"github.com/tigrisgo/tigris/runtime/monitor.Start": {60, 0, 0, 0, 0},
	}
	for fn, want := range self {
		got := p.Self[fn]
		if len(got) != len(want) {
			t.Errorf("%s: self %v, want %v", fn, got, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: self %v, want %v", fn, got, want)
				break
			}
		}
	}
	if len(p.Self) != len(self) {
		t.Errorf("functions %v, want those of %v", p.Self, self)
	}
	calls := map[string]int64{"example.com/p.value": 4, "github.com/tigrisgo/tigris/runtime/monitor.Start": 3}
	for fn, n := range calls {
		if p.Calls[fn] != n {
			t.Errorf("%s called %d times, want %d", fn, p.Calls[fn], n)
		}
	}
	if c := p.Callers["example.com/p.value"]; c["example.com/p.Parse"] != 3 || c["example.com/p.value"] != 1 {
		t.Errorf("callers of value %v, want Parse 3 and value 1", c)
	}
	if p.Total[0] != 1000 || p.Total[3] != 1 {
		t.Errorf("summary %v", p.Total)
	}
}

func TestReadProfileNotCallgrind(t *testing.T) {
	if _, err := ReadProfile(strings.NewReader("hello\n")); err == nil {
		t.Error("a file without an events line read without an error")
	}
}

func TestAnalyze(t *testing.T) {
	p, err := ReadProfile(strings.NewReader(sampleDump))
	if err != nil {
		t.Fatal(err)
	}
	r := Run{Name: "x", Op: "example.com/p.value", Measured: []string{"example.com/p."}}
	b, err := Analyze(r, p)
	if err != nil {
		t.Fatal(err)
	}
	// 4 operations: the module's own 149 instructions, Start's 60.
	if m := b.Per(PartModule); m.Ir != 149.0/4 || m.Call != 4.0/4 {
		t.Errorf("module part %+v, want Ir 37.25, 1 call an operation", m)
	}
	if s := b.Per(PartStart); s.Ir != 15 || b.Starts() != 0.75 {
		t.Errorf("Start part %+v, %v starts an operation; want Ir 15, 0.75", s, b.Starts())
	}
	// Ir + 10 Bm + 10 L1m + 100 LLm over the module's functions: 149 + 30 + 60 + 100.
	if c := b.Per(PartModule).Cycles(); c != (149.0+30+60+100)/4 {
		t.Errorf("module cycles %v, want %v", c, (149.0+30+60+100)/4)
	}
	if _, err := Analyze(Run{Name: "x", Op: "example.com/p.missing"}, p); err == nil {
		t.Error("an operation never called analyzed without an error")
	}
}

func TestProfileMinus(t *testing.T) {
	p, err := ReadProfile(strings.NewReader(sampleDump))
	if err != nil {
		t.Fatal(err)
	}
	// The shorter run: Parse alone, no call of value.
	q, err := ReadProfile(strings.NewReader("events: Ir D1mr D1mw DLmr Bcm\nsummary: 100\nfn=(1) example.com/p.Parse\n10 20 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := p.Minus(q)
	if got := d.Self["example.com/p.Parse"]; got[0] != 9 || got[1] != 0 || got[2] != 1 {
		t.Errorf("Parse's own cost beyond the shorter run %v, want [9 0 1 0 0]", got)
	}
	if got := d.Self["example.com/p.value"]; got[0] != 120 {
		t.Errorf("value's own cost beyond the shorter run %v, want all of it (120 instructions)", got)
	}
	if d.Calls["example.com/p.value"] != 4 || d.Total[0] != 900 {
		t.Errorf("calls of value %d, total %v; want 4, 900 instructions", d.Calls["example.com/p.value"], d.Total)
	}
	if z := p.Minus(p); z.Calls["example.com/p.value"] != 0 || z.Self["example.com/p.value"][0] != 0 {
		t.Errorf("a profile less itself: %v calls, %v", z.Calls, z.Self)
	}
}

func TestScopePrefix(t *testing.T) {
	for in, want := range map[string]string{
		"within(modernc.org/sqlite)":                                          "modernc.org/sqlite.",
		"execution(* net/http.(*ServeMux).*(..))":                             "net/http.(*ServeMux).",
		"execution(* github.com/tigrisgo/tigris/examples/petclinic/...*(..))": "github.com/tigrisgo/tigris/examples/petclinic/",
		"call(* f(..))": "",
	} {
		if got := scopePrefix(in); got != want {
			t.Errorf("scopePrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLastDump(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "run.callgrind")
	if got := LastDump(base); got != base {
		t.Errorf("no dumps: %q, want %q", got, base)
	}
	touch := func(name string) {
		if err := os.WriteFile(name, nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	touch(base)
	touch(base + ".1")
	touch(base + "-short.callgrind") // another run's file beside it
	if got := LastDump(base); got != base+".1" {
		t.Errorf("one dump: %q, want %q", got, base+".1")
	}
	touch(base + ".2")
	if got := LastDump(base); got != base+".2" {
		t.Errorf("two dumps: %q, want %q", got, base+".2")
	}
	touch(base + ".10")
	touch(base + ".3")
	if got := LastDump(base); got != base+".3" {
		t.Errorf("dumps 1, 2, 3, 10: %q, want the one before the last, %q", got, base+".3")
	}
}
