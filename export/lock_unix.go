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
// ends it; release also removes the file, so a shipper that stopped leaves
// none (one killed leaves it, unlocked, and the next run takes it over).
//
// Removing a lock file is safe only with a check: a second shipper may have
// opened the file just before it was removed and lock it once it is let go,
// while a third creates a new file at the path and locks that. So a lock
// counts only on the file that is at the path when it is taken; on a removed
// one, the shipper tries again.
func lockCheckpoint(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("export: locking the checkpoint: %w", err)
	}
	name := path + ".lock"
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("export: locking the checkpoint: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(name)
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
		var locked, current syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &locked) == nil && syscall.Stat(name, &current) == nil &&
			locked.Dev == current.Dev && locked.Ino == current.Ino {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return func() {
				os.Remove(name) // while the lock is held: see above
				f.Close()
			}, nil
		}
		f.Close() // the holder before removed it meanwhile
		if attempt == 100 {
			return nil, fmt.Errorf("export: locking the checkpoint: %s keeps being replaced", name)
		}
	}
}
