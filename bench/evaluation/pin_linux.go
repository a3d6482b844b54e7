package evaluation

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"unsafe"
)

// cpuMask is the kernel's CPU set of sched_{get,set}affinity (1024 CPUs).
type cpuMask [16]uint64

func affinity(get bool, m *cpuMask) error {
	nr := uintptr(syscall.SYS_SCHED_SETAFFINITY)
	if get {
		nr = syscall.SYS_SCHED_GETAFFINITY
	}
	// pid 0: the calling thread.
	if _, _, e := syscall.RawSyscall(nr, 0, unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m))); e != 0 {
		return e
	}
	return nil
}

// allowedCPUs are the CPUs this process may run on, ascending; nil when the
// system does not say.
func allowedCPUs() []int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var m cpuMask
	if affinity(true, &m) != nil {
		return nil
	}
	var cpus []int
	for i := range len(m) * 64 {
		if m[i/64]&(1<<(i%64)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// startOn starts cmd with every thread of the new process allowed on cpu
// only (cpu < 0: wherever the scheduler likes). A child inherits the
// affinity of the thread that forks it, so the calling goroutine is locked to
// its thread, the thread's affinity set to cpu for the fork and set back
// after; no other goroutine runs on that thread meanwhile.
func startOn(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, one cpuMask
	if err := affinity(true, &old); err != nil {
		return cmd.Start()
	}
	one[cpu/64] = 1 << (cpu % 64)
	if err := affinity(false, &one); err != nil {
		return cmd.Start()
	}
	err := cmd.Start()
	_ = affinity(false, &old)
	return err
}

// cpusAllowed is the Cpus_allowed_list of a process, as /proc says it ("1",
// "0-1"); "" where there is none.
func cpusAllowed(pid int) string {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
