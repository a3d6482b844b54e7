package rewriter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A lock file that makes parallel compiles of one build wait for the first
// one's resolution instead of each starting a go list.

// lockFile takes an exclusive lock by creating name (O_EXCL) with this process's
// pid in it, waiting while another live process holds it. A lock whose holder
// has died is taken over; after lockWait the caller proceeds without the lock
// (costing at worst a duplicate go list, never a wrong result: results are
// written atomically).
func lockFile(name string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(name) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if data, err := os.ReadFile(name); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && !processAlive(pid) {
				os.Remove(name)
				continue
			}
		}
		if time.Now().After(deadline) {
			return func() {}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockWait bounds how long a compile waits for another one's resolution.
var lockWait = 10 * time.Minute

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		return true // FindProcess opened it, so it exists
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
