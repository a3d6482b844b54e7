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
	if len(s) < headerLen || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return Parent{}, false
	}
	if len(s) > headerLen && (s[headerLen] != '-' || s[0] == '0' && s[1] == '0') {
		// A later version appends fields after a dash; version 00 is
		// exactly 55 bytes.
		return Parent{}, false
	}
	// Each pair of digits is one byte with two lookups; a bad digit sets a
	// bit above the byte, and bad collects them for one test at the end.
	ver := unhex[s[0]]<<4 | unhex[s[1]]
	flags := unhex[s[53]]<<4 | unhex[s[54]]
	bad := ver | flags
	t := s[3:35]
	for i := 0; i < len(t); i += 2 {
		v := unhex[t[i]]<<4 | unhex[t[i+1]]
		bad |= v
		p.TraceID[i/2] = byte(v)
	}
	t = s[36:52]
	for i := 0; i < len(t); i += 2 {
		v := unhex[t[i]]<<4 | unhex[t[i+1]]
		bad |= v
		p.SpanID[i/2] = byte(v)
	}
	p.Flags = byte(flags)
	if bad > 0xff || ver == 0xff || !p.Valid() {
		return Parent{}, false
	}
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

// FormatTraceID formats a trace id as a traceparent writes it: 32 lowercase
// hex digits, as tracing backends show it.
func FormatTraceID(id [16]byte) string {
	return string(appendHex(make([]byte, 0, 2*len(id)), id[:]))
}

const digits = "0123456789abcdef"

func appendHex(b, v []byte) []byte {
	for _, x := range v {
		b = append(b, digits[x>>4], digits[x&0xf])
	}
	return b
}

// unhex maps each lowercase hex digit to its value and every other byte to
// 0x100, above any byte: the specification allows no upper case.
var unhex = func() (t [256]uint16) {
	for i := range t {
		t[i] = 0x100
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint16(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = uint16(c-'a') + 10
	}
	return t
}()
