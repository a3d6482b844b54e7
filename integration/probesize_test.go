package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

// maxBytesPerProbe bounds what one probed function adds to a binary, beyond
// the function itself: its prologue and exits, their metadata (pclntab,
// funcdata, DWARF), its entry in the probe table and its Probe. docs/
// performance.md gives the figure this bound keeps (about 450 bytes for the
// functions manyFunctions writes).
const maxBytesPerProbe = 600

// manyFunctions is a package of n functions of four shapes (an int and an
// error with two returns, a method returning a string, a function without
// results, a method returning a slice), each kept in the binary by a table.
func manyFunctions(n int) string {
	var b strings.Builder
	b.WriteString("package many\n\nimport (\n\t\"errors\"\n\t\"strings\"\n)\n\ntype T struct {\n\tn int\n\ts string\n}\n\nvar errNeg = errors.New(\"negative\")\n\n")
	var all strings.Builder
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "func F%d(x int) (int, error) {\n\tif x < 0 {\n\t\treturn 0, errNeg\n\t}\n\tfor x > %d {\n\t\tx /= 3\n\t}\n\treturn x + %d, nil\n}\n\n", i, i+7, i)
			fmt.Fprintf(&all, "\tF%d,\n", i)
		case 1:
			fmt.Fprintf(&b, "func (t *T) M%d(s string) string {\n\tfor i := 0; i < t.n; i++ {\n\t\tif strings.HasPrefix(s, t.s) {\n\t\t\treturn s[%d%%len(s):]\n\t\t}\n\t\ts += t.s\n\t}\n\treturn s\n}\n\n", i, i)
			fmt.Fprintf(&all, "\t(*T).M%d,\n", i)
		case 2:
			fmt.Fprintf(&b, "func G%d(xs []int) {\n\tfor i := range xs {\n\t\txs[i] *= %d\n\t\tif xs[i] > 1000 {\n\t\t\tpanic(\"big\")\n\t\t}\n\t}\n}\n\n", i, i)
			fmt.Fprintf(&all, "\tG%d,\n", i)
		case 3:
			fmt.Fprintf(&b, "func (t T) H%d(m map[string]int) []string {\n\tvar out []string\n\tfor k, v := range m {\n\t\tif v == %d {\n\t\t\treturn nil\n\t\t}\n\t\tout = append(out, k+t.s)\n\t}\n\treturn out\n}\n\n", i, i)
			fmt.Fprintf(&all, "\tT.H%d,\n", i)
		}
	}
	fmt.Fprintf(&b, "var All = []any{\n%s}\n", all.String())
	return b.String()
}

// TestBytesPerProbe builds a program with n and 2n probed functions, plainly
// and through tigris, and checks what each probe adds to the binary (the
// growth of the instrumented binaries less that of the plain ones, over n) and
// that package initialization allocates as often with 2n probes as with n:
// registration costs nothing per probe at start but the statistics' memory.
func TestBytesPerProbe(t *testing.T) {
	const n = 400
	type build struct{ plain, tigris int64 }
	var sizes [2]build
	var allocs [2]int
	for k, count := range []int{n, 2 * n} {
		dir := itest.NewModule(t, map[string]string{
			// Every function probed, as on a module tigris init selects whole.
			"tigris.yaml":  "version: 1\nmonitor:\n  include: [\"within(example.com/itest/...)\"]\n  inlinable: probe\n  small: probe\n",
			"many/many.go": manyFunctions(count),
			"main.go":      "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/itest/many\"\n)\n\nfunc main() { fmt.Println(len(many.All)) }\n",
		})
		plain := filepath.Join(dir, "plain"+itest.ExeSuffix())
		inst := filepath.Join(dir, "inst"+itest.ExeSuffix())
		itest.Go(t, dir, nil, "build", "-o", plain, ".")
		itest.Tigris(t, dir, nil, "go", "build", "-o", inst, ".")
		sizes[k] = build{fileSize(t, plain), fileSize(t, inst)}
		allocs[k] = initAllocs(t, inst, "example.com/itest/many")
	}
	perProbe := float64((sizes[1].tigris-sizes[0].tigris)-(sizes[1].plain-sizes[0].plain)) / n
	t.Logf("binaries with %d and %d functions: plain %d and %d bytes, tigris %d and %d: %.0f bytes a probe; init allocations %d and %d",
		n, 2*n, sizes[0].plain, sizes[1].plain, sizes[0].tigris, sizes[1].tigris, perProbe, allocs[0], allocs[1])
	if perProbe > maxBytesPerProbe || perProbe <= 0 {
		t.Errorf("%.0f bytes a probe; want at most %d (and more than none: the functions are probed)", perProbe, maxBytesPerProbe)
	}
	// Before probe tables were constants, init allocated four times a probe.
	if d := allocs[1] - allocs[0]; d > 8 || d < -8 {
		t.Errorf("the package's init allocates %d times with %d probes, %d times with %d; want as many", allocs[0], n, allocs[1], 2*n)
	}
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// initAllocs runs bin under GODEBUG=inittrace=1 and returns the allocations
// the runtime reports for the initialization of package pkg.
func initAllocs(t *testing.T, bin, pkg string) int {
	t.Helper()
	out := itest.RunProgram(t, bin, "GODEBUG=inittrace=1")
	m := regexp.MustCompile(`(?m)^init ` + regexp.QuoteMeta(pkg) + ` @.* ([0-9]+) allocs$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no init trace of %s in\n%s", pkg, out)
	}
	a, _ := strconv.Atoi(m[1])
	return a
}
