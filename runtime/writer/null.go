package writer

import "sync/atomic"

// Null discards records and counts them as Written (they reached the destination
// chosen for them); it is MooBench's "collecting" configuration: probes do all their
// work except writing. The zero value is ready to use. Counting is per P, so
// producers on different Ps do not contend.
type Null struct {
	n [64]struct {
		v atomic.Uint64
		_ [56]byte
	}
}

// Define does nothing.
func (*Null) Define(ProbeDef) {}

// Write counts r.
func (n *Null) Write(*Record) {
	if n == nil {
		return
	}
	pid := procPin()
	n.n[uint(pid)%uint(len(n.n))].v.Add(1)
	procUnpin()
}

// Flush does nothing.
func (*Null) Flush() error { return nil }

// Close does nothing; Null keeps counting after it.
func (*Null) Close() error { return nil }

// Stats reports the records discarded as Written.
func (n *Null) Stats() Stats {
	if n == nil {
		return Stats{}
	}
	var st Stats
	for i := range n.n {
		st.Written += n.n[i].v.Load()
	}
	return st
}
