//go:build unix

package export

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive reports whether process pid of this machine still runs. A
// zombie (exited, not yet reaped by its parent) does not: it writes nothing.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // unknown: assume it runs
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// pid (comm) state ...: the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			switch stat[i+2] {
			case 'Z', 'X', 'x':
				return false
			}
		}
	}
	return true
}
