package tracecontext

// Parent is the position of a request in its trace: the trace, the span
// that sent the request (the parent of the receiver's spans) and the trace
// flags.
type Parent struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte // bit 0: sampled; the others as received
}

// FlagSampled is the trace flag that says the caller may have recorded the
// request: a service that follows it records it too.
const FlagSampled byte = 1

// Sampled reports whether the sampled flag is set.
func (p Parent) Sampled() bool { return p.Flags&FlagSampled != 0 }

// Valid reports whether neither id is all zeros, as the specification
// requires of a traceparent.
func (p Parent) Valid() bool { return p.TraceID != [16]byte{} && p.SpanID != [8]byte{} }

// headerLen is the length of a version 00 traceparent.
const headerLen = 55

// Parse reads a traceparent header value. ok is false for a value the
// specification tells a receiver to ignore. It reads at most 56 bytes of s
// and allocates nothing.
func Parse(s string) (p Parent, ok bool) {
	if len(s) < headerLen {
		return Parent{}, false
	}
	ver, ok1 := hexByte(s[0], s[1])
	if !ok1 || ver == 0xff || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return Parent{}, false
	}
	switch {
	case ver == 0 && len(s) != headerLen:
		return Parent{}, false
	case len(s) > headerLen && s[headerLen] != '-':
		// A later version appends fields after a dash.
		return Parent{}, false
	}
	if !hexBytes(p.TraceID[:], s[3:35]) || !hexBytes(p.SpanID[:], s[36:52]) {
		return Parent{}, false
	}
	f, ok1 := hexByte(s[53], s[54])
	if !ok1 || !p.Valid() {
		return Parent{}, false
	}
	p.Flags = f
	return p, true
}

// String formats p as a version 00 traceparent.
func (p Parent) String() string {
	b := make([]byte, 0, headerLen)
	b = append(b, '0', '0', '-')
	b = appendHex(b, p.TraceID[:])
	b = append(b, '-')
	b = appendHex(b, p.SpanID[:])
	b = append(b, '-')
	b = appendHex(b, []byte{p.Flags})
	return string(b)
}

const digits = "0123456789abcdef"

func appendHex(b, v []byte) []byte {
	for _, x := range v {
		b = append(b, digits[x>>4], digits[x&0xf])
	}
	return b
}

// hexBytes decodes lowercase hex s into dst (len(s) == 2*len(dst)).
func hexBytes(dst []byte, s string) bool {
	for i := range dst {
		v, ok := hexByte(s[2*i], s[2*i+1])
		if !ok {
			return false
		}
		dst[i] = v
	}
	return true
}

func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := nibble(hi)
	l, ok2 := nibble(lo)
	return h<<4 | l, ok1 && ok2
}

// nibble decodes one lowercase hex digit: the specification allows no
// upper case.
func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
