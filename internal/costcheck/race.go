//go:build race

package costcheck

// raceFactor widens every allowance in race-detector builds, where the
// instrumented code allocates 2.5 to 6 times what it does otherwise
// (shadow state, and values the instrumentation makes escape). The bounds
// are set for normal builds; linearity (Linear) is a ratio and needs none.
const raceFactor = 8
