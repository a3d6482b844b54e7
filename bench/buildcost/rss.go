package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// compilerExe is the compiler of the go command on PATH.
var compilerExe = sync.OnceValue(func() string {
	exe := filepath.Join(strings.TrimSpace(run(".", nil, "go", "env", "GOTOOLDIR")), "compile")
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
})

// sampledStep is step with the peak RSS of the build's largest compiler
// process (result.compilerRSSMB).
func sampledStep(dir, cache, exe string, args ...string) result {
	stop, peak := make(chan struct{}), make(chan float64)
	go func() { peak <- sampleCompilers(compilerExe(), cache, stop) }()
	r := step(dir, cache, exe, args...)
	close(stop)
	r.compilerRSSMB = <-peak
	return r
}

// sampleCompilers reads, every 20 ms until stop is closed, the peak resident
// set (VmHWM in /proc/PID/status) of every running process whose executable
// is compiler and whose environment holds GOCACHE=cache (the builds of
// others on the machine have other caches), and returns the largest in MB.
// A process's growth in its last 20 ms is missed.
func sampleCompilers(compiler, cache string, stop <-chan struct{}) float64 {
	mine := []byte("GOCACHE=" + cache + "\x00")
	var maxKB int
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return float64(maxKB) / 1024
		case <-tick.C:
		}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid := e.Name()
			if pid[0] < '0' || pid[0] > '9' {
				continue
			}
			if exe, err := os.Readlink("/proc/" + pid + "/exe"); err != nil || exe != compiler {
				continue
			}
			env, err := os.ReadFile("/proc/" + pid + "/environ")
			if err != nil || !bytes.HasPrefix(env, mine) && !bytes.Contains(env, append([]byte{0}, mine...)) {
				continue
			}
			if kb := vmHWM("/proc/" + pid + "/status"); kb > maxKB {
				maxKB = kb
			}
		}
	}
}

// vmHWM is the VmHWM of a /proc/PID/status file in kB, 0 when it cannot be
// read.
func vmHWM(status string) int {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	_, rest, ok := strings.Cut(string(data), "VmHWM:")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.Atoi(f[0])
	return kb
}
