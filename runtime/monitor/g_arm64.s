#include "textflag.h"

// func getg() unsafe.Pointer
//
// The running goroutine's g: arm64 keeps it in register R28, which the
// assembler calls g.
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET
