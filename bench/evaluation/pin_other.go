//go:build !linux

package evaluation

import "os/exec"

// allowedCPUs: only Linux says.
func allowedCPUs() []int { return nil }

// startOn starts cmd; pinning is implemented on Linux only.
func startOn(cmd *exec.Cmd, cpu int) error { return cmd.Start() }

// cpusAllowed: only Linux says.
func cpusAllowed(pid int) string { return "" }
