//go:build exectrace

package main

// The Go execution tracer peer: what a Go programmer reaches for first to time
// a function without a monitoring framework. Every call of monitoredMethod is
// a user region (runtime/trace.StartRegion/End) while the tracer writes to
// -trace-out. Built by bench with `go build -tags exectrace`.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/trace"
	"time"
)

var traceOut = flag.String("trace-out", "moobench.trace", "file the execution tracer writes")

// startPeer starts the execution tracer; stop stops it and closes the file.
// The tracer does not drop events: when the file cannot keep up, its buffers
// grow.
func startPeer() (stop func() error, err error) {
	f, err := os.Create(*traceOut)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := trace.Start(w); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the execution tracer: %w", err)
	}
	return func() error {
		trace.Stop()
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}

// monitoredCall is the benchmark's view of the monitored application.
func monitoredCall(methodTime time.Duration, depth int) int64 {
	return monitoredMethod(methodTime, depth)
}

// monitoredMethod is method.go's with a user region around every call. The
// body is repeated rather than shared: a helper for the busy wait would not
// be inlined (two calls) and would add a call to every variant's T.
//
//go:noinline
func monitoredMethod(methodTime time.Duration, recDepth int) int64 {
	defer trace.StartRegion(context.Background(), "monitoredMethod").End()
	if recDepth > 1 {
		return monitoredMethod(methodTime, recDepth-1)
	}
	exit := nanotime() + int64(methodTime)
	var now int64
	for {
		now = nanotime()
		if now >= exit {
			return now
		}
	}
}
