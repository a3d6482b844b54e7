#include "textflag.h"

// func getg() unsafe.Pointer
//
// The running goroutine's g: the runtime keeps it in thread-local storage,
// which the assembler reaches through the TLS pseudo-register in any package.
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
