package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/internal/moments"
)

// A program is a real module from the module proxy, pinned, measured as a
// new user meets it: a copy of the module with `tigris init` run in it,
// built plain and through tigris from empty caches.
type program struct {
	name, title     string
	module, version string
	// selectOne, when set, narrows tigris init's config to the module's
	// package of this import path; otherwise the whole module is selected.
	selectOne string
	// startup names what start-up measures, and start runs the binary once
	// and returns the time from exec to that point.
	startup string
	start   func(bin, dir string) time.Duration
}

var programs = []program{
	{
		name: "nats", title: "NATS server (a message broker)",
		module: "github.com/nats-io/nats-server/v2", version: "v2.15.2",
		startup: "exec to accepting TCP connections on its port", start: startListening,
	},
	{
		name: "errcheck", title: "errcheck (a command, its main package selected)",
		module: "github.com/kisielk/errcheck", version: "v1.9.0", selectOne: "github.com/kisielk/errcheck",
		startup: "exec to exit of `errcheck -h`", start: startHelp,
	},
}

// fetch copies the program's module out of the module cache (the go command
// downloads it into a temporary module first) and runs tigris init in the
// copy. The module's toolchain line is dropped, so that the machine's go
// command builds it (GOTOOLCHAIN=local); its go line stays as it is.
func (p program) fetch(root, tigris, tmp string) string {
	env := []string{"GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-mod=mod"}
	mod := filepath.Join(tmp, p.name+"-fetch")
	if err := os.MkdirAll(mod, 0o777); err != nil {
		log.Fatal(err)
	}
	run(mod, env, "go", "mod", "init", "buildcost.invalid/fetch")
	var info struct{ Dir string }
	out := run(mod, env, "go", "mod", "download", "-json", p.module+"@"+p.version)
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Dir == "" {
		log.Fatalf("go mod download %s@%s: %v\n%s", p.module, p.version, err, out)
	}
	dir := filepath.Join(tmp, p.name)
	run(tmp, nil, "cp", "-r", info.Dir, dir)
	run(tmp, nil, "chmod", "-R", "u+w", dir)
	goLine := func() string { return goLineOf(run(dir, env, "go", "mod", "edit", "-print")) }
	before := goLine()
	run(dir, env, "go", "mod", "edit", "-toolchain=none")
	home := filepath.Join(tmp, p.name+"-init.home")
	run(dir, append(env, "XDG_CACHE_HOME="+home), tigris, "init", "--runtime", filepath.Join(root, "runtime"))
	if after := goLine(); after != before {
		log.Fatalf("%s: tigris init moved the go line from %q to %q", p.module, before, after)
	}
	if p.selectOne != "" {
		cfg := filepath.Join(dir, "tigris.yaml")
		data, err := os.ReadFile(cfg)
		if err != nil {
			log.Fatal(err)
		}
		whole := "execution(* " + p.module + "/...*(..))"
		if !strings.Contains(string(data), whole) {
			log.Fatalf("%s: tigris init's config does not select %s", cfg, whole)
		}
		write(cfg, strings.Replace(string(data), whole, "execution(* "+p.selectOne+".*(..))", 1))
	}
	return dir
}

// goLineOf is the go line of a go.mod's text.
func goLineOf(gomod string) string {
	for _, l := range strings.Split(gomod, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "go "); ok {
			return v
		}
	}
	return ""
}

// A programRound is one pair of builds from empty caches and the start-ups
// of their binaries.
type programRound struct {
	plain, tigris        result
	plainSize, tigSize   int64
	plainStart, tigStart float64 // median seconds
}

// measureProgram builds the program n times plain and through tigris, in
// turn (which goes first alternates), each from an empty build cache and an
// empty user cache (tigris's), the module cache warm, and starts each
// round's binaries starts times, alternating.
func measureProgram(p program, dir, tigris, tmp string, n, starts int) []programRound {
	out := filepath.Join(tmp, p.name+"-bin")
	if err := os.MkdirAll(out, 0o777); err != nil {
		log.Fatal(err)
	}
	runDir := filepath.Join(tmp, p.name+"-run")
	if err := os.MkdirAll(runDir, 0o777); err != nil {
		log.Fatal(err)
	}
	plainBin, tigBin := filepath.Join(out, "plain"), filepath.Join(out, "tigris")
	// build builds bin from empty caches. The previous round's binary is
	// removed first: the go command finds a binary whose build ID matches
	// up to date and then compiles neither its main package nor links.
	build := func(bin, exe string, args ...string) result {
		if err := os.Remove(bin); err != nil && !os.IsNotExist(err) {
			log.Fatal(err)
		}
		cache := filepath.Join(tmp, p.name+"-cache")
		defer func() { os.RemoveAll(cache); os.RemoveAll(cache + ".home") }()
		return sampledStep(dir, cache, exe, append(args, "-o", bin, ".")...)
	}
	stop, loads := make(chan struct{}), make(chan []float64)
	go func() { loads <- sampleLoad(stop) }()
	defer func() {
		close(stop)
		l := <-loads
		slices.Sort(l)
		log.Printf("%s: 1-minute load average during the run: %.1f to %.1f, median %.1f (%d samples, every 30 s)", p.name, l[0], l[len(l)-1], moments.Median(l), len(l))
	}()
	var rs []programRound
	for i := range n {
		var r programRound
		plain := func() { r.plain = build(plainBin, "go", "build") }
		inst := func() { r.tigris = build(tigBin, tigris, "go", "build") }
		if i%2 == 0 {
			plain()
			inst()
		} else {
			inst()
			plain()
		}
		r.plainSize, r.tigSize = size(plainBin), size(tigBin)
		var ps, ts []float64
		for range starts {
			ps = append(ps, p.start(plainBin, runDir).Seconds())
			ts = append(ts, p.start(tigBin, runDir).Seconds())
		}
		r.plainStart, r.tigStart = moments.Median(ps), moments.Median(ts)
		rs = append(rs, r)
		log.Printf("%s: round %d/%d: wall %.1fs / %.1fs, cpu %.1fs / %.1fs (tigris / plain)", p.name, i+1, n, r.tigris.seconds, r.plain.seconds, r.tigris.cpu, r.plain.cpu)
	}
	return rs
}

func size(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		log.Fatal(err)
	}
	return fi.Size()
}

// printProgram prints a program's table: medians over the rounds, and the
// median of the rounds' ratios.
func printProgram(rs []programRound) {
	row := func(name string, f func(programRound) (tig, plain float64), format func(float64) string, diff bool) {
		var ts, ps, ratios []float64
		for _, r := range rs {
			t, p := f(r)
			ts, ps, ratios = append(ts, t), append(ps, p), append(ratios, t/p)
		}
		t, p := moments.Median(ts), moments.Median(ps)
		ratio := fmt.Sprintf("%.2f ×", moments.Median(ratios))
		if diff {
			ratio += " (" + signed(format(t-p), t-p) + ")"
		}
		fmt.Printf("| %s | %s | %s | %s |\n", name, format(p), format(t), ratio)
	}
	secs := func(s float64) string { return fmt.Sprintf("%.1f s", s) }
	mb := func(v float64) string { return fmt.Sprintf("%.0f MB", v) }
	bytes := func(v float64) string { return fmt.Sprintf("%.1f MB", v/1e6) }
	ms := func(s float64) string { return fmt.Sprintf("%.1f ms", 1e3*s) }
	fmt.Println("| | plain | tigris | ratio |")
	fmt.Println("|---|---|---|---|")
	row("wall, empty caches", func(r programRound) (float64, float64) { return r.tigris.seconds, r.plain.seconds }, secs, false)
	row("CPU (user+sys, all processes)", func(r programRound) (float64, float64) { return r.tigris.cpu, r.plain.cpu }, secs, false)
	row("largest compiler process (peak RSS)", func(r programRound) (float64, float64) { return r.tigris.compilerRSSMB, r.plain.compilerRSSMB }, mb, false)
	row("binary size", func(r programRound) (float64, float64) { return float64(r.tigSize), float64(r.plainSize) }, bytes, true)
	row("start-up", func(r programRound) (float64, float64) { return r.tigStart, r.plainStart }, ms, true)
	last := rs[len(rs)-1]
	fmt.Printf("\nthe last round: compiles (go build -x) plain %d, tigris %d (%d of them instrumented); largest process of all: plain %.0f MB, tigris %.0f MB\n",
		last.plain.compiles, last.tigris.compiles, last.tigris.instrumented, last.plain.maxRSSMB, last.tigris.maxRSSMB)
}

func signed(s string, v float64) string {
	if v >= 0 {
		return "+" + s
	}
	return s
}

// startListening starts a NATS server on a free port and returns the time
// until the port accepts a connection.
func startListening(bin, dir string) time.Duration {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", port)
	cmd.Dir = dir
	start := time.Now()
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	for time.Since(start) < 30*time.Second {
		if c, err := net.Dial("tcp", addr); err == nil {
			d := time.Since(start)
			c.Close()
			return d
		}
		time.Sleep(100 * time.Microsecond)
	}
	log.Fatalf("%s: nothing accepts on %s after 30 s", bin, addr)
	return 0
}

// startHelp runs bin -h and returns the time until it exits (with any
// status: flag's -h exits 0 or 2).
func startHelp(bin, dir string) time.Duration {
	cmd := exec.Command(bin, "-h")
	cmd.Dir = dir
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		log.Fatal(err)
	}
	return d
}

// sampleLoad reads the machine's 1-minute load average every 30 s until stop
// is closed and returns the samples: others' work on the machine shows in
// wall times first.
func sampleLoad(stop <-chan struct{}) []float64 {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	var loads []float64
	for {
		if data, err := os.ReadFile("/proc/loadavg"); err == nil {
			if f := strings.Fields(string(data)); len(f) > 0 {
				v, _ := strconv.ParseFloat(f[0], 64)
				loads = append(loads, v)
			}
		}
		select {
		case <-stop:
			return loads
		case <-tick.C:
		}
	}
}
