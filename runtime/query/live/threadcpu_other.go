//go:build !linux

package live

import "time"

// threadCPU has no clock of a thread's CPU time here: the budget measures
// wall time inside the query's steps instead (budget.go).
func threadCPU() (time.Duration, bool) { return 0, false }
