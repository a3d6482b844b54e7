//go:build unix

package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockCheckpoint takes an exclusive lock beside the checkpoint (path.lock)
// for as long as the shipper runs: two shippers on one checkpoint would
// each send what the other sends. The lock goes with the process, whatever
// ends it; the file stays and names the last holder.
func lockCheckpoint(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("export: locking the checkpoint: %w", err)
	}
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("export: locking the checkpoint: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path + ".lock")
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := "another tigris export"
			if pid := strings.TrimSpace(string(holder)); pid != "" {
				who += " (pid " + pid + ")"
			}
			return nil, fmt.Errorf("export: checkpoint %s is in use by %s: two shippers on one checkpoint would send everything twice", path, who)
		}
		return nil, fmt.Errorf("export: locking the checkpoint: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
