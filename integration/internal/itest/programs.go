package itest

// Programs and configs that tests in several packages build.

// ShopConfig is the tigris.yaml of the instrumented tests. Tests share its
// pointcuts (and change run-time settings with TIGRIS_* variables or in their
// own copy of the file) because every distinct set of pointcuts is a distinct
// compiler fingerprint, which recompiles the standard library.
const ShopConfig = `version: 1
monitor:
  include: ["within(example.com/itest/...)", "call(* strconv.Itoa(..)) && within(example.com/itest/...)"]
  mode: coarse
  inlinable: probe   # the tests watch small functions too
  small: probe
  coarse-budget: 0%  # exact counts: every coarse call timed
`

// ShopFiles is a program exercising the shapes the rewriter must keep intact:
// methods with value and pointer receivers, generics, variadics, named and
// unnamed results, recover, panics, runtime.Caller and goroutines. With the
// argument "stats" it prints its own coarse statistics; with "panic" it dies.
var ShopFiles = map[string]string{
	"tigris.yaml": ShopConfig,
	"shop/shop.go": `package shop

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"
)

type Store struct{ items map[string]int }

func New() *Store { return &Store{items: map[string]int{"a": 1, "b": 2}} }

func (s *Store) Find(key string) (int, error) {
	v, ok := s.items[key]
	if !ok {
		return 0, errors.New("not found: " + key)
	}
	return v, nil
}

func (s Store) Len() int { return len(s.items) }

func Fib(n int) int {
	if n < 2 {
		return n
	}
	return Fib(n-1) + Fib(n-2)
}

func Max[T cmp.Ordered](a, b T) T {
	if a > b {
		return a
	}
	return b
}

type Stack[T any] struct{ items []T }

func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }

func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, true
}

func Sum(xs ...int) (total int) {
	for _, x := range xs {
		total += x
	}
	return
}

// Safe runs f and turns a panic into an error.
func Safe(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	f()
	return nil
}

func Boom(n int) int {
	if n > 2 {
		panic(fmt.Sprintf("boom %d", n))
	}
	return Boom(n + 1)
}

func Where() string {
	_, file, line, _ := runtime.Caller(0)
	return fmt.Sprintf("%s:%d", file[len(file)-len("shop/shop.go"):], line)
}

// Spawn computes Fib(n) on each of k goroutines.
func Spawn(k, n int) int {
	var wg sync.WaitGroup
	results := make([]int, k)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = Fib(n)
		}()
	}
	wg.Wait()
	return Sum(results...)
}

// Nap takes at least d: its mean duration is known.
func Nap(d time.Duration) { time.Sleep(d) }

// Label's call into strconv is measured by a call(...) pointcut.
func Label(n int) string {
	s := strconv.Itoa(n)
	return "#" + s
}
`,
	"shop/shop_test.go": `package shop

import "testing"

func TestFind(t *testing.T) {
	s := New()
	if v, err := s.Find("a"); v != 1 || err != nil {
		t.Fatal(v, err)
	}
	if _, err := s.Find("x"); err == nil {
		t.Fatal("no error")
	}
}

func TestSafe(t *testing.T) {
	if err := Safe(func() { Boom(0) }); err == nil || err.Error() != "recovered: boom 3" {
		t.Fatal(err)
	}
}

func TestSpawn(t *testing.T) {
	if got := Spawn(4, 10); got != 4*55 {
		t.Fatal(got)
	}
}
`,
	"main.go": `package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	"example.com/itest/shop"
	"github.com/tigrisgo/tigris/runtime/monitor"
)

func main() {
	s := shop.New()
	for i := 0; i < 10; i++ {
		s.Find("a")
		s.Find("zz")
	}
	fmt.Println(s.Find("b"))
	fmt.Println(s.Len(), shop.Fib(15), shop.Max(3, 4), shop.Max("a", "b"), shop.Sum(1, 2, 3))
	var st shop.Stack[string]
	st.Push("x")
	fmt.Println(st.Pop())
	fmt.Println(st.Pop())
	fmt.Println(shop.Safe(func() { shop.Boom(0) }))
	fmt.Println(shop.Where())
	fmt.Println(shop.Spawn(3, 10), shop.Label(7))
	if len(os.Args) > 1 && os.Args[1] == "panic" {
		shop.Boom(1)
	}
	if len(os.Args) > 1 && os.Args[1] == "stats" {
		shop.Nap(3 * time.Millisecond)
		shop.Nap(5 * time.Millisecond)
		stats := monitor.Snapshot()
		sort.Slice(stats, func(i, j int) bool { return stats[i].Signature < stats[j].Signature })
		for _, s := range stats {
			fmt.Printf("STAT %s count=%d errors=%d panics=%d\n", s.Signature, s.Count, s.Errors, s.Panics)
			fmt.Printf("MEAN %s %.0f\n", s.Signature, s.MeanNs)
		}
	}
	if len(os.Args) > 1 && os.Args[1] == "exit" {
		os.Exit(3)
	}
}
`,
}

// HelloFiles is a two-package program with tests: main prints
// greet.Hello("gopher").
var HelloFiles = map[string]string{
	"main.go": `package main

import (
	"fmt"

	"example.com/itest/greet"
)

func main() { fmt.Println(greet.Hello("gopher")) }
`,
	"greet/greet.go": `package greet

import "strings"

// Hello greets name.
func Hello(name string) string { return "hello, " + strings.ToUpper(name) }
`,
	"greet/greet_test.go": `package greet

import "testing"

func TestHello(t *testing.T) {
	if got := Hello("x"); got != "hello, X" {
		t.Fatalf("Hello = %q", got)
	}
}
`,
	"greet/ext_test.go": `package greet_test

import (
	"testing"

	"example.com/itest/greet"
)

func TestHelloExternal(t *testing.T) {
	if greet.Hello("") != "hello, " {
		t.Fatal("bad")
	}
}
`,
}

// ShopOutput is what ShopFiles prints without arguments, instrumented or not.
const ShopOutput = `2 <nil>
2 610 4 b 6
x true
 false
recovered: boom 3
shop/shop.go:81
165 #7
`
