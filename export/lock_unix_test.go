//go:build unix

package export

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLockRemovedSafely: shippers that take and let go of one checkpoint's
// lock as fast as they can never hold it two at a time, although each
// removes the lock file as it lets go (a lock on a removed file does not
// count), and no file is left once all have stopped.
func TestLockRemovedSafely(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "export.ckpt")
	var holders, taken atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				release, err := lockCheckpoint(ckpt)
				if err != nil {
					continue // in use: what a second shipper is told
				}
				if n := holders.Add(1); n != 1 {
					t.Errorf("%d shippers hold the lock at once", n)
				}
				taken.Add(1)
				time.Sleep(20 * time.Microsecond) // room for another to come in
				holders.Add(-1)
				release()
			}
		}()
	}
	wg.Wait()
	if taken.Load() == 0 {
		t.Fatal("the lock was never taken")
	}
	noLockFile(t, ckpt)
}
