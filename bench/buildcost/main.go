package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/rewriter"
)

// target is a module to build: how to build it and two configs that differ in
// the matches of one package.
type target struct {
	name   string
	dir    string   // where the go command runs
	build  []string // go arguments after the subcommand flags, e.g. {"build", "-o", OUT, "."}
	config string   // the config
	edited string   // the config with the matches of one package changed
}

var compileLine = regexp.MustCompile(`/compile(?:\.exe)? .*?-p (\S+)`)

// result is one measured step.
type result struct {
	step         string
	seconds      float64 // wall
	cpu          float64 // user + system seconds of all processes of the build
	compiles     int     // compiles the go command ran
	instrumented int     // of them, compiles through the instrumenter
	nested       int     // runtime packages the nested go list compiled
	maxRSSMB     float64
	// compilerRSSMB is the largest compiler process's peak RSS, sampled
	// (sampledStep); 0 for step.
	compilerRSSMB float64
	compiled      map[string]bool
}

func main() {
	only := flag.String("target", "", "measure only this target: moobench or xsync, or a program from the module proxy, nats or errcheck (default: moobench and xsync)")
	flag.BoolVar(&warmOnly, "warm-only", false, "skip the empty-cache steps (one plain build fills the cache the warm steps use)")
	nRounds := flag.Int("rounds", 0, "instead of the one-run table, N rounds of the ratio builds (plain and tigris in turn, empty caches and warm no-ops): medians and the medians of the per-round ratios; a program's table has 1 round unless set")
	starts := flag.Int("starts", 20, "a program's start-ups per binary and round")
	flag.Parse()
	log.SetFlags(0)
	switch *only {
	case "", "moobench", "xsync", "nats", "errcheck":
	default:
		log.Fatalf("buildcost: unknown -target %q: moobench, xsync, nats or errcheck", *only)
	}
	root, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tigris-buildcost-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	tigris := filepath.Join(tmp, "tigris")
	run(root, nil, "go", "build", "-o", tigris, "./cmd/tigris")

	for _, p := range programs {
		if *only != p.name {
			continue
		}
		dir := p.fetch(root, tigris, tmp)
		n := max(*nRounds, 1)
		fmt.Printf("\n### %s %s@%s, %d rounds, start-up: %s (median of %d a round)\n\n", p.title, p.module, p.version, n, p.startup, *starts)
		printProgram(measureProgram(p, dir, tigris, tmp, n, *starts))
		return
	}
	var targets []target
	if *only == "" || *only == "moobench" {
		targets = append(targets, moobench(root, tmp))
	}
	if *only == "" || *only == "xsync" {
		targets = append(targets, xsync(root, tmp))
	}
	for _, t := range targets {
		if *nRounds > 0 {
			fmt.Printf("\n### %s, %d rounds\n\n", t.name, *nRounds)
			printRounds(rounds(t, tigris, tmp, *nRounds))
			continue
		}
		fmt.Printf("\n### %s\n\n", t.name)
		fmt.Println("| step | wall | CPU (user+sys) | compiles (go command) | of them instrumented | runtime packages (nested go list) | peak RSS (largest process) |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, r := range measure(t, tigris, tmp) {
			fmt.Printf("| %s | %.1f s | %.1f s | %d | %d | %d | %.0f MB |\n", r.step, r.seconds, r.cpu, r.compiles, r.instrumented, r.nested, r.maxRSSMB)
		}
	}
}

func moobench(root, tmp string) target {
	dir := filepath.Join(root, "examples", "moobench")
	data, err := os.ReadFile(filepath.Join(dir, "tigris.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	cfg := filepath.Join(tmp, "moobench.yaml")
	write(cfg, string(data))
	edited := filepath.Join(tmp, "moobench-edited.yaml")
	write(edited, strings.Replace(string(data), `include: [`, `include: ["execution(* github.com/tigrisgo/tigris/examples/moobench.clockPair(..))", `, 1))
	return target{name: "examples/moobench (go build)", dir: dir, build: []string{"build", "-o", filepath.Join(tmp, "moobench-bin"), "."}, config: cfg, edited: edited}
}

// xsync copies golang.org/x/sync from the module cache, requires the runtime
// of this checkout, and builds its test binaries.
func xsync(root, tmp string) target {
	out := run(root, nil, "go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sync")
	src := strings.TrimSpace(out)
	dir := filepath.Join(tmp, "xsync")
	run(root, nil, "cp", "-r", src, dir)
	run(root, nil, "chmod", "-R", "u+w", dir)
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	run(dir, env, "go", "mod", "edit", "-require=github.com/tigrisgo/tigris/runtime@v0.0.0", "-replace=github.com/tigrisgo/tigris/runtime="+filepath.Join(root, "runtime"))
	sum, _ := os.ReadFile(filepath.Join(root, "runtime", "go.sum"))
	old, _ := os.ReadFile(filepath.Join(dir, "go.sum"))
	write(filepath.Join(dir, "go.sum"), string(old)+string(sum))
	cfg := filepath.Join(tmp, "xsync.yaml")
	write(cfg, "version: 1\nmonitor:\n  include: [\"execution(* golang.org/x/sync/...*(..))\"]\n")
	edited := filepath.Join(tmp, "xsync-edited.yaml")
	write(edited, "version: 1\nmonitor:\n  include: [\"execution(* golang.org/x/sync/...*(..))\"]\n  exclude: [\"execution(* golang.org/x/sync/semaphore.*(..))\"]\n")
	return target{name: "golang.org/x/sync test binaries (go test -c ./...)", dir: dir, build: []string{"test", "-c", "-o", filepath.Join(tmp, "xsync-bin") + "/", "./..."}, config: cfg, edited: edited}
}

// warmOnly skips the steps from an empty cache.
var warmOnly bool

// measure runs the steps of one target.
func measure(t target, tigris, tmp string) []result {
	os.MkdirAll(filepath.Join(tmp, "xsync-bin"), 0o777)
	cacheN := 0
	fresh := func() string {
		cacheN++
		return filepath.Join(tmp, fmt.Sprintf("cache-%d", cacheN))
	}
	nothing := filepath.Join(tmp, "nothing.yaml")
	write(nothing, "version: 1\nmonitor:\n  include: [\"execution(* example.com/nowhere/...*(..))\"]\n")
	plain := func(cache string) result { return step(t.dir, cache, "go", t.build...) }
	inst := func(cache, cfg string) result {
		before := staleRuntime(t.dir, cache)
		r := step(t.dir, cache, tigris, append([]string{"go", "--config", cfg}, t.build...)...)
		after := staleRuntime(t.dir, cache)
		for p := range before {
			if !after[p] && !r.compiled[p] {
				r.nested++
			}
		}
		return r
	}
	settings := filepath.Join(tmp, "settings.yaml")
	data, _ := os.ReadFile(t.config)
	write(settings, string(data)+"writer:\n  flush: 2s\n")

	var rs []result
	add := func(name string, r result) {
		r.step = name
		rs = append(rs, r)
		log.Printf("%s: %s %.1fs wall %.1fs cpu %d compiles", t.name, name, r.seconds, r.cpu, r.compiles)
	}
	if !warmOnly {
		add("plain, empty cache", plain(fresh()))
		add("instrumented, empty cache", inst(fresh(), t.config))
		add("nothing matched, empty cache", inst(fresh(), nothing))
	}
	warm := fresh()
	plain(warm)
	add("plain, warm (no-op)", plain(warm))
	add("nothing matched, warm plain cache", inst(warm, nothing))
	add("instrumented, first build on the warm plain cache", inst(warm, t.config))
	add("instrumented, warm (no-op)", inst(warm, t.config))
	add("pointcut edit (one package's matches)", inst(warm, t.edited))
	add("pointcut edit reverted", inst(warm, t.config))
	add("run-time settings edit", inst(warm, settings))
	return rs
}

// step runs one build with -x, a GOCACHE of its own and /usr/bin/time.
func step(dir, cache, exe string, args ...string) result {
	// -x goes right after the subcommand.
	for i, a := range args {
		if a == "build" || a == "test" {
			args = append(append(append([]string{}, args[:i+1]...), "-x"), args[i+1:]...)
			break
		}
	}
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%U %S %M", exe}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), cacheEnv(cache)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v\n%s", exe, strings.Join(args, " "), err, stderr.String())
	}
	r := result{seconds: time.Since(start).Seconds(), compiled: map[string]bool{}}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	for _, l := range lines {
		if m := compileLine.FindStringSubmatch(l); m != nil && !strings.Contains(l, "-V=full") {
			r.compiles++
			r.compiled[m[1]] = true
			if strings.Contains(l, " -"+rewriter.DigestFlag+"=") {
				r.instrumented++
			}
		}
	}
	if f := strings.Fields(lines[len(lines)-1]); len(f) == 3 {
		u, _ := strconv.ParseFloat(f[0], 64)
		sys, _ := strconv.ParseFloat(f[1], 64)
		kb, _ := strconv.Atoi(f[2])
		r.cpu, r.maxRSSMB = u+sys, float64(kb)/1024
	}
	return r
}

// staleRuntime returns the packages instrumented code imports, and their
// imports, that the cache lacks: what tigris's nested go list compiles.
func staleRuntime(dir, cache string) map[string]bool {
	args := append([]string{"list", "-deps", "-f", "{{if .Stale}}{{.ImportPath}}{{end}}"}, rewriter.MonitorPackages...)
	out := run(dir, cacheEnv(cache), "go", args...)
	stale := map[string]bool{}
	for _, p := range strings.Fields(out) {
		stale[p] = true
	}
	return stale
}

// cacheEnv is the environment of a step on cache. Every GOCACHE gets a user
// cache directory of its own (XDG_CACHE_HOME): tigris keeps there where it
// found the runtime's export data, and a resolution left by an earlier step
// would point into that step's cache, so an "empty cache" would skip the
// runtime's compile.
func cacheEnv(cache string) []string {
	return []string{"GOCACHE=" + cache, "XDG_CACHE_HOME=" + cache + ".home", "GOWORK=off", "GOFLAGS=-mod=mod"}
}

func run(dir string, env []string, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		log.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(name, content string) {
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
}
