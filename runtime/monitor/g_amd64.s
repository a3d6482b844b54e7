#include "textflag.h"

// func getg() unsafe.Pointer
//
// The running goroutine's g: the runtime keeps it in thread-local storage,
// which the assembler reaches through the TLS pseudo-register in any package.
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func ticksAndG() (ticks int64, gp unsafe.Pointer)
//
// The time-stamp counter and the running goroutine's g in one call: an exit
// needs both first thing, and a call costs more than either read.
TEXT ·ticksAndG(SB),NOSPLIT,$0-16
	RDTSC
	SHLQ	$32, DX
	ORQ	DX, AX
	MOVQ	AX, ticks+0(FP)
	MOVQ	(TLS), AX
	MOVQ	AX, gp+8(FP)
	RET
