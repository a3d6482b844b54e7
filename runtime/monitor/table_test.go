package monitor

import (
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/tigrisgo/tigris/runtime/settings"
)

func TestTableRoundTrip(t *testing.T) {
	infos := []ProbeInfo{
		{Package: "example.com/shop/repo", Recv: "Store", RecvPtr: true, Name: "Find",
			Params: []string{"string"}, Results: []string{"int", "error"},
			File: "example.com/shop/repo/store.go", Line: 12, Flags: 5, Cyclomatic: 3, Statements: 7},
		{Package: "example.com/shop/repo", Name: "Sum", Params: []string{"...int"}, Results: []string{"int"},
			File: "example.com/shop/repo/store.go", Line: 300000, Flags: 1 << 31},
		{Package: "os", Name: "Exit", Params: []string{"int"}, File: "example.com/shop/repo/main.go", Line: 1},
	}
	table := EncodeTable(infos)
	got, err := decodeTable(table)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, infos) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, infos)
	}
	// Each string is written once: the package path and the file name of
	// the first two probes, "int" in three places.
	if n := countString(table, "example.com/shop/repo/store.go"); n != 1 {
		t.Errorf("the file name is in the table %d times; want once", n)
	}
	if got := testing.AllocsPerRun(10, func() { decodeTable(table) }); got != 3 {
		t.Errorf("decoding allocates %v times; want 3 (pool, descriptions, types)", got)
	}
	empty, err := decodeTable(EncodeTable(nil))
	if err != nil || len(empty) != 0 {
		t.Errorf("empty table: %v, %v", empty, err)
	}
}

func countString(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}

// TestTableMalformed: every prefix of a table, and a table with a byte
// changed, is an error or a table, never a panic.
func TestTableMalformed(t *testing.T) {
	table := EncodeTable([]ProbeInfo{{Package: "p", Name: "F", Params: []string{"int"}, File: "p/f.go", Line: 3}})
	for i := 0; i < len(table); i++ {
		if _, err := decodeTable(table[:i]); !errors.Is(err, errTable) {
			t.Errorf("prefix of %d bytes: %v; want a malformed table", i, err)
		}
	}
	for i := len(tableMagic); i < len(table); i++ {
		b := []byte(table)
		b[i] = 0xff
		decodeTable(string(b))
	}
}

func FuzzDecodeTable(f *testing.F) {
	f.Add(EncodeTable([]ProbeInfo{{Package: "p", Recv: "T", Name: "F", Params: []string{"int"}, Results: []string{"error"}, File: "p/f.go", Line: 3}}))
	f.Fuzz(func(t *testing.T, table string) {
		infos, err := decodeTable(table)
		if err != nil {
			return
		}
		if again := EncodeTable(infos); len(again) > len(table) {
			t.Errorf("re-encoded table of %d bytes is longer than the %d decoded", len(again), len(table))
		}
	})
}

// TestRegisterConstantWork: registering a package does the same work
// whatever its number of probes, but for a few stores a probe and its share
// of the registry's list: it decodes no description, allocates no
// statistics, and allocates as often for 4,000 probes as for 400. The
// descriptions are decoded at their first use, once a package, and a probe
// gets its statistics at its first call.
func TestRegisterConstantWork(t *testing.T) {
	type work struct {
		allocs, bytesPerProbe float64
		decodes               int64
	}
	measure := func(n int) work {
		infos := make([]ProbeInfo, n)
		for i := range infos {
			infos[i] = ProbeInfo{Package: "example.com/many", Name: "F" + strconv.Itoa(i), Params: []string{"int"}, Results: []string{"error"}, File: "example.com/many/f.go", Line: i + 1}
		}
		table := EncodeTable(infos)
		decodes := tableDecodes.Load()
		var probes [][]Probe
		for i := 0; i < 6; i++ {
			probes = append(probes, make([]Probe, n))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs := testing.AllocsPerRun(5, func() {
			RegisterTable(probes[0], table, Links{})
			probes = probes[1:]
		})
		runtime.ReadMemStats(&after)
		w := work{allocs: allocs, decodes: tableDecodes.Load() - decodes,
			bytesPerProbe: float64(after.TotalAlloc-before.TotalAlloc) / float64(6*n)}
		return w
	}
	a, b := measure(400), measure(4000)
	t.Logf("400 probes: %+v; 4000 probes: %+v", a, b)
	if b.allocs > a.allocs+1 { // the registry's list of probes may grow once more
		t.Errorf("registering 400 probes allocates %v times, 4,000 probes %v times; want the same", a.allocs, b.allocs)
	}
	if a.decodes != 0 || b.decodes != 0 {
		t.Errorf("registration decoded %d and %d tables; want none", a.decodes, b.decodes)
	}
	// What is proportional is the registry's list of probes: 8 bytes a probe,
	// and its growth (by a quarter, so up to five times that in all). A
	// probe's statistics are 136 bytes and 128 a P, its description 160.
	if b.bytesPerProbe > 64 {
		t.Errorf("registration allocates %.1f bytes a probe; want the list's share (8 to 40)", b.bytesPerProbe)
	}
}

// TestDescriptionsAtFirstUse: a package's descriptions are decoded once, at
// the first use of any of them, and a probe gets statistics at its first
// call; until then it reads as a probe without calls.
func TestDescriptionsAtFirstUse(t *testing.T) {
	infos := []ProbeInfo{
		{Package: "example.com/lazy", Name: "A", File: "example.com/lazy/a.go", Line: 3},
		{Package: "example.com/lazy", Recv: "T", RecvPtr: true, Name: "B", Params: []string{"int"}, Results: []string{"error"}, File: "example.com/lazy/a.go", Line: 9},
	}
	probes := make([]Probe, 2)
	decodes := tableDecodes.Load()
	RegisterTable(probes, EncodeTable(infos), Links{})
	if probes[0].stats.Load() != &noStats || probes[1].stats.Load() != &noStats {
		t.Fatal("a probe had statistics before its first call")
	}
	if got := probes[1].totals(); got != (totals{}) {
		t.Errorf("totals of a probe never called: %+v", got)
	}
	if got, want := probes[1].info().Signature(), "example.com/lazy.(*T).B(int) error"; got != want {
		t.Errorf("signature %q, want %q", got, want)
	}
	if got := *probes[0].info(); !reflect.DeepEqual(got, infos[0]) {
		t.Errorf("description %+v, want %+v", got, infos[0])
	}
	if n := tableDecodes.Load() - decodes; n != 1 {
		t.Errorf("the table was decoded %d times; want once", n)
	}
	probes[1].mode.Store(modeCoarse)
	c := Start(&probes[1])
	c.exit(false, 0, false)
	ss := probes[1].stats.Load()
	if ss == &noStats || probes[0].stats.Load() != &noStats {
		t.Fatal("the first call did not give its probe, and only it, statistics")
	}
	if got := probes[1].totals().calls(); got != 1 {
		t.Errorf("calls after one call: %d", got)
	}
	c = Start(&probes[1])
	c.exit(false, 0, false)
	if probes[1].stats.Load() != ss || probes[1].totals().calls() != 2 {
		t.Errorf("the second call: statistics replaced or not counted (%d calls)", probes[1].totals().calls())
	}
}

// TestTableBadAtFirstUse: a table whose mark is right but whose body does not
// decode (or describes another number of probes) is found at the first use of
// its descriptions: reported, its probes switched off and kept off.
func TestTableBadAtFirstUse(t *testing.T) {
	table := EncodeTable([]ProbeInfo{{Package: "example.com/bad", Name: "F", File: "example.com/bad/f.go", Line: 1}})
	for name, probes := range map[string][]Probe{"count": make([]Probe, 2), "body": make([]Probe, 1)} {
		tab := table
		if name == "body" {
			tab = table[:len(table)-1]
		}
		RegisterTable(probes, tab, Links{})
		probes[0].mode.Store(modeCoarse)
		if in := probes[0].info(); in.Package != "?" {
			t.Errorf("%s: description of a bad table: %+v", name, in)
		}
		registry.mu.Lock()
		reevaluate()
		registry.mu.Unlock()
		for i := range probes {
			if probes[i].On() {
				t.Errorf("%s: probe %d of a bad table is on", name, i)
			}
		}
	}
	// With a rule, registration itself decodes the table to match it.
	registry.mu.Lock()
	saved := registry.base
	pc, err := parsePattern("execution(* example.com/bad.*(..))")
	if err != nil {
		registry.mu.Unlock()
		t.Fatal(err)
	}
	registry.base = []compiledRule{{Rule: settings.Rule{Pattern: "execution(* example.com/bad.*(..))", Mode: settings.Coarse}, pc: pc}}
	registry.mu.Unlock()
	defer func() {
		registry.mu.Lock()
		registry.base = saved
		reevaluate()
		registry.mu.Unlock()
	}()
	probes := make([]Probe, 2)
	RegisterTable(probes, table, Links{})
	for i := range probes {
		if probes[i].On() {
			t.Errorf("with a rule: probe %d of a bad table is on", i)
		}
	}
}
