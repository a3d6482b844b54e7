package writer

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// cpuMask is a sched_setaffinity(2) CPU set.
type cpuMask [16]uint64

func getAffinity() (cpuMask, error) {
	var m cpuMask
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if e != 0 {
		return m, e
	}
	return m, nil
}

func setAffinity(m cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	if e != 0 {
		return e
	}
	return nil
}

// TestClockAcrossCPUs moves one thread from CPU to CPU between the two ends
// of every interval (sched_setaffinity), so each interval starts on one CPU
// and ends on another: the time-stamp counters of different CPUs must agree
// as well as nanotime does.
func TestClockAcrossCPUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := getAffinity()
	if err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	defer setAffinity(orig)
	var cpus []int
	for i := 0; i < len(orig)*64; i++ {
		if orig[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		t.Skipf("this thread may run on %d CPU(s)", len(cpus))
	}
	on := func(cpu int) {
		var m cpuMask
		m[cpu/64] |= 1 << (cpu % 64)
		if err := setAffinity(m); err != nil {
			t.Fatalf("sched_setaffinity(%d): %v", cpu, err)
		}
	}
	var pairs [][2]bracket
	for i := 0; i < 200; i++ {
		from, to := cpus[i%len(cpus)], cpus[(i+1)%len(cpus)]
		on(from)
		a := readBracket()
		on(to) // the kernel moves the thread before the call returns
		pairs = append(pairs, [2]bracket{a, readBracket()})
	}
	checkIntervals(t, pairs)
}
