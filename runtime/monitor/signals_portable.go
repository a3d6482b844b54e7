package monitor

// This file is replaced by signals_linked.go in instrumented builds whose
// os/signal tigris could patch (rewriter/signalpatch.go). Without it the
// monitor cannot tell whether the program handles a signal itself, so it
// installs no signal handler at all (handleSignals).

// signalsLinked reports whether os/signal notes the registered channels at
// each delivery (handlersAtDelivery).
const signalsLinked = false

// handlersAtDelivery returns how many channels were registered for signal n
// when it was last delivered; -1: unknown.
func handlersAtDelivery(n int) int64 { return -1 }
