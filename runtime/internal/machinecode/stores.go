package machinecode

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// Store is one store to memory other than the goroutine's stack.
type Store struct {
	Src  string // file:line the compiler attributes it to
	Dst  string // destination operand, e.g. "0x40(AX)"
	Line int    // line of the disassembly it was read from, for messages
}

// Stores compiles the package in dir (`go build -o`, as for a program: a test
// binary carries no symbol table) and returns the stores to memory in the
// function whose symbol matches fn (a go tool objdump -s pattern), in the
// order of the code, with the disassembly for messages.
func Stores(dir, tmp, fn string) ([]Store, string, error) {
	if _, err := regexp.Compile(fn); err != nil {
		return nil, "", err
	}
	pkg := tmp + "/pkg.a"
	build := exec.Command("go", "build", "-o", pkg, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "objdump", "-s", fn, pkg).CombinedOutput()
	if err != nil {
		return nil, "", fmt.Errorf("go tool objdump: %v\n%s", err, out)
	}
	var stores []Store
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) < 4 {
			continue
		}
		src, inst := f[0], strings.TrimSpace(f[len(f)-1])
		comma := strings.LastIndex(inst, ", ")
		if !strings.HasPrefix(inst, "MOV") || comma < 0 {
			continue
		}
		dst := inst[comma+2:]
		if !strings.Contains(dst, "(") || strings.Contains(dst, "(SP)") {
			continue // a register or the stack
		}
		stores = append(stores, Store{Src: src, Dst: dst, Line: i})
	}
	if len(stores) == 0 {
		return nil, string(out), fmt.Errorf("no store found in %s:\n%s", fn, out)
	}
	return stores, string(out), nil
}

// PublishedLast checks that the one store publish picks comes after every
// store field picks, and returns how many of those there are. It fails when
// publish picks none or more than one: the code changed shape, and the order
// needs a look by hand.
func PublishedLast(stores []Store, field, publish func(Store) bool) (fields int, err error) {
	at := -1
	for i, s := range stores {
		switch {
		case publish(s):
			if at >= 0 {
				return 0, fmt.Errorf("two publishing stores, at lines %d and %d", stores[at].Line, s.Line)
			}
			at = i
		case field(s):
			fields++
			if at >= 0 {
				return fields, fmt.Errorf("a store of the record (%s, line %d) comes after the store that publishes it (line %d)", s.Src, s.Line, stores[at].Line)
			}
		}
	}
	if at < 0 {
		return fields, fmt.Errorf("no publishing store")
	}
	return fields, nil
}
