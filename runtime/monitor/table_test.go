package monitor

import (
	"errors"
	"reflect"
	"testing"
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

// TestRegisterTableAllocations: registering a package allocates the same
// number of times whatever its number of probes.
func TestRegisterTableAllocations(t *testing.T) {
	allocs := func(n int) float64 {
		infos := make([]ProbeInfo, n)
		for i := range infos {
			infos[i] = ProbeInfo{Package: "example.com/many", Name: "F", Params: []string{"int"}, Results: []string{"error"}, File: "example.com/many/f.go", Line: i + 1}
		}
		table := EncodeTable(infos)
		return testing.AllocsPerRun(5, func() { RegisterTable(make([]Probe, n), table, Links{}) })
	}
	a, b := allocs(100), allocs(1000)
	if b > a+1 { // the registry's list of probes may grow once more
		t.Errorf("registering 100 probes allocates %v times, 1000 probes %v times; want the same", a, b)
	}
}
