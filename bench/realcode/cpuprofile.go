package realcode

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// cpuProfile is what the shares need of a CPU profile as go test
// -cpuprofile writes it (runtime/pprof: profile.proto, gzip-compressed):
// every sample's CPU time and its stack of functions. A decoder of its own,
// of the few fields read, keeps the module free of a profile library.
type cpuProfile struct {
	Funcs   []profFunc
	Samples []profSample
	// frames holds every sample's stack, one after another.
	frames []int32
}

// profFunc is a function of the profile: its name, its source file as the
// build saw it and the line of its func keyword.
type profFunc struct {
	Name      string
	File      string
	StartLine int64
}

// profSample is one sample: its CPU time and, in the profile's frames,
// where its stack starts and ends.
type profSample struct {
	Nanos      int64
	start, end int
}

// stack is s's stack: indexes of p.Funcs, the innermost frame first,
// functions inlined into a caller as frames of their own. It must not be
// modified.
func (p *cpuProfile) stack(s profSample) []int32 { return p.frames[s.start:s.end] }

// The profile.proto fields read: Profile.sample_type (1), sample (2),
// location (4), function (5), string_table (6); Sample.location_id (1),
// value (2); Location.id (1), line (4); Line.function_id (1); Function.id
// (1), name (2), filename (4), start_line (5); ValueType.type (1).
const (
	maxProfileBytes = 64 << 20 // decompressed: a benchmark's profile is a few hundred kilobytes
	// framesPerByte bounds a profile's stacks, inlined frames expanded, by
	// its size: a real sample names each location in a byte or two, and a
	// location's inlined frames are seldom more than a few.
	framesPerByte = 16
)

// readCPUProfile reads and decodes a CPU profile file, gzip-compressed or
// not.
func readCPUProfile(name string) (*cpuProfile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	if data, err = gunzipProfile(data, maxProfileBytes); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := decodeCPUProfile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// gunzipProfile decompresses data when it starts with gzip's magic number,
// up to limit bytes.
func gunzipProfile(data []byte, limit int) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, fmt.Errorf("more than %d bytes decompressed: not a benchmark's CPU profile", limit)
	}
	return out, nil
}

// protoField is one field of a protobuf message: its number, and its value
// as a varint (wire types 0, 1, 5) or bytes (wire type 2).
type protoField struct {
	num  uint64
	wire uint64
	v    uint64
	b    []byte
}

var errTruncated = errors.New("truncated protobuf")

// nextField decodes the field at the start of b and returns it and what
// follows it.
func nextField(b []byte) (protoField, []byte, error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return protoField{}, nil, errTruncated
	}
	b = b[n:]
	f := protoField{num: key >> 3, wire: key & 7}
	switch f.wire {
	case 0:
		f.v, n = binary.Uvarint(b)
		if n <= 0 {
			return f, nil, errTruncated
		}
		return f, b[n:], nil
	case 1:
		if len(b) < 8 {
			return f, nil, errTruncated
		}
		return f, b[8:], nil
	case 5:
		if len(b) < 4 {
			return f, nil, errTruncated
		}
		return f, b[4:], nil
	case 2:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return f, nil, errTruncated
		}
		f.b = b[n : n+int(l)]
		return f, b[n+int(l):], nil
	}
	return f, nil, fmt.Errorf("protobuf wire type %d not supported", f.wire)
}

// eachField calls fn for every field of the message b.
func eachField(b []byte, fn func(protoField) error) error {
	for len(b) > 0 {
		f, rest, err := nextField(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// varints appends the values of a repeated integer field: one value, or a
// packed list of them.
func varints(dst []uint64, f protoField) ([]uint64, error) {
	switch f.wire {
	case 0:
		return append(dst, f.v), nil
	case 2:
		for b := f.b; len(b) > 0; {
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return dst, errTruncated
			}
			dst, b = append(dst, v), b[n:]
		}
		return dst, nil
	}
	return dst, fmt.Errorf("field %d: wire type %d for integers", f.num, f.wire)
}

// decodeCPUProfile decodes an uncompressed profile.proto. The sample value
// taken is the one whose type is "cpu" (else the last); a location or
// function a sample names but the profile lacks is an error.
func decodeCPUProfile(data []byte) (*cpuProfile, error) {
	var sampleTypes []int64 // string indexes
	var samples, locations, functions [][]byte
	var strs []string
	err := eachField(data, func(f protoField) error {
		if f.wire != 2 {
			return nil // a scalar field of the profile: not read
		}
		switch f.num {
		case 1:
			return eachField(f.b, func(g protoField) error {
				if g.num == 1 && g.wire == 0 {
					sampleTypes = append(sampleTypes, int64(g.v))
				}
				return nil
			})
		case 2:
			samples = append(samples, f.b)
		case 4:
			locations = append(locations, f.b)
		case 5:
			functions = append(functions, f.b)
		case 6:
			strs = append(strs, string(f.b))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	str := func(i uint64) (string, error) {
		if i >= uint64(len(strs)) {
			return "", fmt.Errorf("string %d of %d", i, len(strs))
		}
		return strs[i], nil
	}
	valueIndex := len(sampleTypes) - 1
	for i, t := range sampleTypes {
		if s, err := str(uint64(t)); err == nil && s == "cpu" {
			valueIndex = i
		}
	}

	p := &cpuProfile{Funcs: make([]profFunc, 0, len(functions))}
	funcByID := make(map[uint64]int32, len(functions))
	for _, b := range functions {
		var id uint64
		var fn profFunc
		err := eachField(b, func(f protoField) error {
			if f.wire != 0 {
				return nil
			}
			var err error
			switch f.num {
			case 1:
				id = f.v
			case 2:
				fn.Name, err = str(f.v)
			case 4:
				fn.File, err = str(f.v)
			case 5:
				fn.StartLine = int64(f.v)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("function: %w", err)
		}
		funcByID[id] = int32(len(p.Funcs))
		p.Funcs = append(p.Funcs, fn)
	}

	// Every location's functions, innermost first, one after another in
	// locFuncs.
	type span struct{ start, end int }
	locByID := make(map[uint64]span, len(locations))
	var locFuncs []int32
	for _, b := range locations {
		var id uint64
		start := len(locFuncs)
		err := eachField(b, func(f protoField) error {
			switch {
			case f.num == 1 && f.wire == 0:
				id = f.v
			case f.num == 4 && f.wire == 2:
				return eachField(f.b, func(g protoField) error {
					if g.num != 1 || g.wire != 0 {
						return nil
					}
					fi, ok := funcByID[g.v]
					if !ok {
						return fmt.Errorf("no function %d", g.v)
					}
					locFuncs = append(locFuncs, fi)
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("location: %w", err)
		}
		locByID[id] = span{start, len(locFuncs)}
	}

	maxFrames := framesPerByte * len(data)
	p.Samples = make([]profSample, 0, len(samples))
	var ids, values []uint64
	for _, b := range samples {
		ids, values = ids[:0], values[:0]
		err := eachField(b, func(f protoField) error {
			var err error
			switch f.num {
			case 1:
				ids, err = varints(ids, f)
			case 2:
				values, err = varints(values, f)
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("sample: %w", err)
		}
		s := profSample{start: len(p.frames)}
		if valueIndex >= 0 && valueIndex < len(values) {
			s.Nanos = int64(values[valueIndex])
		}
		for _, id := range ids {
			l, ok := locByID[id]
			if !ok {
				return nil, fmt.Errorf("sample: no location %d", id)
			}
			if len(p.frames)+l.end-l.start > maxFrames {
				return nil, fmt.Errorf("the stacks hold more than %d frames, %d per byte of the profile: not a CPU profile", maxFrames, framesPerByte)
			}
			p.frames = append(p.frames, locFuncs[l.start:l.end]...)
		}
		s.end = len(p.frames)
		p.Samples = append(p.Samples, s)
	}
	return p, nil
}
