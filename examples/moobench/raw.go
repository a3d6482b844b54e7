package main

// This file is copied verbatim into examples/moobench-otel: keep the copies equal
// (bench's TestExampleCopiesInSync checks). bench.ReadRaw reads the format.

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
)

// The raw data file is little-endian binary, the cheapest to write and to read
// back (16 MB for 2,000,000 calls; CSV would be 2–3 × that and need parsing):
//
//	offset  size  field
//	     0     8  magic "MOOBENCH"
//	     8     4  format version, 2
//	    12     4  goroutines G
//	    16     8  calls per goroutine N
//	    24     8  recursion depth
//	    32     8  method time, ns
//	    40     8  clock-pair cost, ns per pair (float64 bits; 0: not measured)
//	    48     8  clock pairs timed
//	    56     8  wall time of the whole benchmark loop, ns
//	    64     8  heap objects the process allocated during the loop
//	    72     8  bytes the process allocated during the loop
//	    80  8·G·N timings, ns per top-level call (int64), goroutine 0's N calls
//	              first, each goroutine's in call order
//
// Version 1 had no allocation counts: its timings start at offset 64.
const (
	rawMagic      = "MOOBENCH"
	rawVersion    = 2
	rawHeaderSize = 80
)

type header struct {
	Goroutines     uint32
	Calls          int64
	Depth          int64
	MethodTime     int64
	ClockPairNs    float64
	ClockPairIters int64
	Elapsed        int64
	Mallocs        uint64
	AllocBytes     uint64
}

func writeRaw(path string, h *header, timings []int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	b := make([]byte, 0, rawHeaderSize)
	b = append(b, rawMagic...)
	b = binary.LittleEndian.AppendUint32(b, rawVersion)
	b = binary.LittleEndian.AppendUint32(b, h.Goroutines)
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Calls))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Depth))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.MethodTime))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(h.ClockPairNs))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.ClockPairIters))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Elapsed))
	b = binary.LittleEndian.AppendUint64(b, h.Mallocs)
	b = binary.LittleEndian.AppendUint64(b, h.AllocBytes)
	w.Write(b)
	var buf [8]byte
	for _, t := range timings {
		binary.LittleEndian.PutUint64(buf[:], uint64(t))
		w.Write(buf[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
