package writer

// haveTSC: amd64 has RDTSC; invariantTSC asks whether it is invariant.
const haveTSC = true

// rdtsc reads the time-stamp counter (clock_amd64.s). It is not serialising:
// the read may move by a few dozen cycles against neighbouring instructions,
// nothing next to a call's duration.
func rdtsc() int64

// cpuid executes CPUID with EAX=leaf, ECX=0 (clock_amd64.s).
func cpuid(leaf uint32) (eax, ebx, ecx, edx uint32)

// invariantTSC reports CPUID 8000_0007h EDX bit 8, "invariant TSC": the
// counter runs at a constant rate in every P-, C- and T-state (Intel SDM
// 17.17.1, AMD APM 2.2.9.1); Linux shows it as the nonstop_tsc flag.
func invariantTSC() bool {
	if max, _, _, _ := cpuid(0x80000000); max < 0x80000007 {
		return false
	}
	_, _, _, edx := cpuid(0x80000007)
	return edx&(1<<8) != 0
}
