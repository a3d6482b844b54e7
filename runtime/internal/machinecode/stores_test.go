//go:build amd64

package machinecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStores reads the stores of a function written for it: both of its
// field stores, in order, and none of its stack traffic.
func TestStores(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/p\n\ngo 1.18\n")
	write("p.go", `package p

type pair struct{ a, b int64 }

//go:noinline
func Set(p *pair, x int64) {
	p.a = x
	p.b = x + 1
}
`)
	stores, dis, err := Stores(dir, t.TempDir(), `p\.Set$`)
	if err != nil {
		t.Fatal(err)
	}
	if len(stores) != 2 || !strings.HasSuffix(stores[0].Src, "p.go:7") || !strings.HasSuffix(stores[1].Src, "p.go:8") {
		t.Fatalf("stores %+v; want p.go:7 then p.go:8 in:\n%s", stores, dis)
	}
	if _, _, err := Stores(dir, t.TempDir(), `p\.Missing$`); err == nil {
		t.Error("a function that is not there: no error")
	}
}

// TestPublishedLast: the order check fails on a field stored after the
// publishing store, and on a missing or doubled one.
func TestPublishedLast(t *testing.T) {
	field := func(s Store) bool { return strings.HasPrefix(s.Src, "f") }
	publish := func(s Store) bool { return s.Src == "pub" }
	st := func(srcs ...string) []Store {
		var ss []Store
		for i, s := range srcs {
			ss = append(ss, Store{Src: s, Line: i})
		}
		return ss
	}
	if n, err := PublishedLast(st("f1", "other", "f2", "pub", "other"), field, publish); err != nil || n != 2 {
		t.Errorf("in order: %d fields, %v", n, err)
	}
	for _, bad := range [][]Store{st("f1", "pub", "f2"), st("f1", "f2"), st("pub", "f1", "pub")} {
		if _, err := PublishedLast(bad, field, publish); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
