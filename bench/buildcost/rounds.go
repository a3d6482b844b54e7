package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/internal/moments"
)

// A ratio row: tigris's build against the plain one, measured in rounds.
type roundRow struct {
	name string
	a, b []result // tigris, plain, in pairs
}

// rounds measures the builds behind the targets' ratios n times, tigris and
// plain in turn so that a drift of the machine's speed hits both: from an
// empty cache (instrumented, nothing matched) and as no-op rebuilds on a warm
// cache (nothing matched, instrumented; five pairs a round). The first no-op
// of each kind is not counted (it fills tigris's plan cache).
func rounds(t target, tigris, tmp string, n int) []roundRow {
	nothing := filepath.Join(tmp, "nothing.yaml")
	write(nothing, "version: 1\nmonitor:\n  include: [\"execution(* example.com/nowhere/...*(..))\"]\n")
	cacheN := 0
	fresh := func() string {
		cacheN++
		return filepath.Join(tmp, fmt.Sprintf("round-cache-%d", cacheN))
	}
	// Each kind writes its own output: a build that finds another kind's
	// binary at its -o path relinks, and a no-op would not be one.
	outputs := map[string][]string{t.config: withOutput(t.build, ".tigris"), nothing: withOutput(t.build, ".nothing")}
	plain := func(cache string) result { return step(t.dir, cache, "go", t.build...) }
	inst := func(cache, cfg string) result {
		return step(t.dir, cache, tigris, append([]string{"go", "--config", cfg}, outputs[cfg]...)...)
	}
	// empty runs build on a cache of its own and removes it afterwards. It
	// removes the build's output first: the go command finds a binary whose
	// build ID matches up to date, even from an empty cache, and then
	// compiles neither its main package nor links.
	empty := func(args []string, build func(cache string) result) result {
		removeOutput(args)
		c := fresh()
		defer func() { os.RemoveAll(c); os.RemoveAll(c + ".home") }()
		return build(c)
	}
	rows := []roundRow{
		{name: "instrumented, empty cache"},
		{name: "nothing matched, empty cache"},
		{name: "nothing matched, warm no-op"},
		{name: "instrumented, warm no-op"},
	}
	warmPlain, warmNothing, warmInst := fresh(), fresh(), fresh()
	plain(warmPlain)
	plain(warmNothing)
	inst(warmNothing, nothing)
	inst(warmInst, t.config)
	for i := range n {
		for j, cfg := range []string{t.config, nothing} {
			a := empty(outputs[cfg], func(c string) result { return inst(c, cfg) })
			b := empty(t.build, plain)
			rows[j].a, rows[j].b = append(rows[j].a, a), append(rows[j].b, b)
		}
		// A no-op takes a tenth of a second: five pairs a round.
		for range 5 {
			for j, c := range []struct{ cache, cfg string }{{warmNothing, nothing}, {warmInst, t.config}} {
				a := inst(c.cache, c.cfg)
				b := plain(warmPlain)
				rows[2+j].a, rows[2+j].b = append(rows[2+j].a, a), append(rows[2+j].b, b)
			}
		}
		log.Printf("%s: round %d/%d", t.name, i+1, n)
	}
	return rows
}

// withOutput is build with suffix added to its -o path (a directory when it
// ends in a slash, created here).
func withOutput(build []string, suffix string) []string {
	build = slices.Clone(build)
	for i := 0; i+1 < len(build); i++ {
		if build[i] != "-o" {
			continue
		}
		o := build[i+1]
		if strings.HasSuffix(o, "/") {
			o = strings.TrimSuffix(o, "/") + suffix + "/"
			if err := os.MkdirAll(o, 0o777); err != nil {
				log.Fatal(err)
			}
		} else {
			o += suffix
		}
		build[i+1] = o
	}
	return build
}

// removeOutput removes what build's -o names (a directory's contents when
// it ends in a slash).
func removeOutput(build []string) {
	for i := 0; i+1 < len(build); i++ {
		if build[i] != "-o" {
			continue
		}
		o := build[i+1]
		err := os.RemoveAll(o)
		if err == nil && strings.HasSuffix(o, "/") {
			err = os.MkdirAll(o, 0o777)
		}
		if err != nil {
			log.Fatal(err)
		}
	}
}

func printRounds(rows []roundRow) {
	wall := func(x result) float64 { return x.seconds }
	cpu := func(x result) float64 { return x.cpu }
	rss := func(x result) float64 { return x.maxRSSMB }
	fmt.Println("| build | tigris wall | plain wall | ratio wall | tigris CPU | plain CPU | ratio CPU | peak RSS tigris / plain |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | ×%.3f | %s | %s | ×%.3f | %.0f / %.0f MB |\n", r.name,
			human.Ns(1e9*medianOf(r.a, wall)), human.Ns(1e9*medianOf(r.b, wall)), r.ratio(wall),
			human.Ns(1e9*medianOf(r.a, cpu)), human.Ns(1e9*medianOf(r.b, cpu)), r.ratio(cpu),
			medianOf(r.a, rss), medianOf(r.b, rss))
	}
}

// medianOf is the median of f over rs.
func medianOf(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, x := range rs {
		v[i] = f(x)
	}
	return moments.Median(v)
}

// ratio is the median of the pairs' ratios of f, tigris over plain.
func (r roundRow) ratio(f func(result) float64) float64 {
	v := make([]float64, len(r.a))
	for i := range r.a {
		v[i] = f(r.a[i]) / f(r.b[i])
	}
	return moments.Median(v)
}
