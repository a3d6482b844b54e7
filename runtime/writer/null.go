package writer

import "sync/atomic"

// Null discards records and counts them as Written (they reached the destination
// chosen for them); it is MooBench's "collecting" configuration: probes do all their
// work except writing. The zero value is ready to use. Counting is per P, so
// producers on different Ps do not contend.
type Null struct {
	n [64]struct {
		v atomic.Uint64 // written by the producer pinned to P i only (setOwn)
		_ [56]byte
	}
	over atomic.Uint64 // Ps from 64 on, which share it
}

// Define does nothing.
func (*Null) Define(ProbeDef) {}

// Write counts r.
func (n *Null) Write(*Record) {
	if n == nil {
		return
	}
	n.WritePinned(procPin())
	procUnpin()
}

// WritePinned is Write for a producer pinned to P pid already (the monitor's
// fine exit, under the pin of its statistics): it counts a record without
// one being built.
//
// A P's own counter takes a plain increment: an atomic one (a locked
// instruction, a full barrier) cost several ns a record, more than the
// asynchronous writer's whole queue store, which would make MooBench's
// writing portion (fine-async − fine-null) come out negative.
func (n *Null) WritePinned(pid int) {
	if uint(pid) < uint(len(n.n)) {
		v := &n.n[pid].v
		setOwn(v, v.Load()+1)
		return
	}
	n.over.Add(1)
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
	st.Written += n.over.Load()
	return st
}
