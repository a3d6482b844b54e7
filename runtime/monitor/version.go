package monitor

// CodeVersion is the version of the contract between the code the tigris
// rewriter generates (prologues, probe tables, main's shutdown hook, the runtime
// slot accessors) and this package. A tigris binary refuses to instrument
// against a monitor whose CodeVersion differs from the one it generates code
// for, and says which versions met, instead of failing with compile or link
// errors in generated code. Increment it with every incompatible change of
// Enter, Call, Register, ProbeInfo, Exit, Shutdown or the slot accessors.
const CodeVersion = 1
