package evaluation

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTick = 10 * time.Millisecond

// machineCPU is the CPU time every CPU spent busy since boot, from the
// aggregate line of /proc/stat (user, nice, system, irq, softirq, steal); 0
// where there is no /proc/stat.
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * clockTick
}

// processCPU is the user and system CPU time of a process ("self" or a pid)
// from /proc/PID/stat; 0 where there is none.
func processCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: fields count from its ")".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	s, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return time.Duration(u+s) * clockTick
}

// threadsCPU is the CPU time the threads of process pid have run, from the
// scheduler's nanosecond counters (/proc/PID/task/*/schedstat; a thread that
// exited meanwhile is not counted, and Go's threads rarely exit); where there
// are none, processCPU's 10 ms ticks.
func threadsCPU(pid int) time.Duration {
	dir := "/proc/" + itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return processCPU(itoa(pid))
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		sum += time.Duration(ns)
	}
	if sum == 0 {
		return processCPU(itoa(pid))
	}
	return sum
}

func itoa(i int) string { return strconv.Itoa(i) }
