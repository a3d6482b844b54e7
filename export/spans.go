package export

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Spans are encoded straight into protobuf bytes (protowire), not built as
// generated message structs and marshalled: a struct per span, per attribute
// and per value costs allocations and a reflective walk, a few microseconds a
// span, and the shipper must keep up with a million spans a second on one core.
// What a probe contributes (name, code.* attributes) is encoded once per probe
// and copied. The tests decode the bytes with the generated types of
// go.opentelemetry.io/proto/otlp to hold the encoder to the schema.

// Field numbers of opentelemetry/proto/trace/v1/trace.proto and common.proto.
const (
	fReqResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fRSResource   = 1 // ResourceSpans.resource
	fRSScopeSpans = 2 // ResourceSpans.scope_spans
	fRSSchemaURL  = 3

	fSSScope     = 1 // ScopeSpans.scope
	fSSSpans     = 2
	fSSSchemaURL = 3

	fSpanTraceID    = 1
	fSpanSpanID     = 2
	fSpanParentID   = 4
	fSpanName       = 5
	fSpanKind       = 6
	fSpanStart      = 7
	fSpanEnd        = 8
	fSpanAttributes = 9
	fSpanEvents     = 11
	fSpanLinks      = 13
	fSpanStatus     = 15

	fLinkTraceID    = 1
	fLinkSpanID     = 2
	fLinkAttributes = 4

	fEventTime       = 1
	fEventName       = 2
	fEventAttributes = 3

	fStatusMessage = 2
	fStatusCode    = 3

	fKVKey   = 1
	fKVValue = 2

	fAnyString = 1
	fAnyInt    = 3

	fResourceAttributes = 1

	fScopeName    = 1
	fScopeVersion = 2

	spanKindInternal = 1
	statusCodeError  = 2
)

// SchemaURL is the semantic conventions version the mapping follows.
const SchemaURL = "https://opentelemetry.io/schemas/1.37.0"

// Attribute keys: OpenTelemetry semantic conventions 1.37.0 where one exists,
// tigris.* for what only tigris knows.
const (
	attrFunction  = "code.function.name"
	attrFile      = "code.file.path"
	attrLine      = "code.line.number"
	attrThread    = "thread.id"
	attrErrorType = "error.type"
	attrExcType   = "exception.type"
	attrExcMsg    = "exception.message"
	attrProbe     = "tigris.probe.id"
	attrSize      = "tigris.result.size"
	attrMissing   = "tigris.parent.missing_levels"
)

// probeEnc is what a probe contributes to each of its spans, encoded once.
type probeEnc struct {
	fields []byte // name (field 5) and the code.* and tigris.probe.id attributes (field 9)
}

// FunctionName is code.function.name for a probe signature as the monitor
// writes it: the signature up to its parameter list, which is the name Go's
// runtime gives the function (runtime.Func.Name, tracebacks, pprof):
// "example.com/shop.(*Store).Find", "example.com/shop.Max[...]". The admin
// endpoint's /metrics labels series with the same name.
func FunctionName(signature string) string { return admin.FunctionName(signature) }

func newProbeEnc(d *writer.ProbeDef) probeEnc {
	name := FunctionName(d.Signature)
	var b []byte
	b = protowire.AppendTag(b, fSpanName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = appendKVString(b, fSpanAttributes, attrFunction, name)
	if d.File != "" {
		b = appendKVString(b, fSpanAttributes, attrFile, d.File)
	}
	if d.Line > 0 {
		b = appendKVInt(b, fSpanAttributes, attrLine, int64(d.Line))
	}
	b = appendKVInt(b, fSpanAttributes, attrProbe, int64(d.ID))
	return probeEnc{fields: b}
}

// appendKVString appends a KeyValue with a string value as field num.
func appendKVString(b []byte, num protowire.Number, key, val string) []byte {
	av := protowire.AppendString(protowire.AppendTag(nil, fAnyString, protowire.BytesType), val)
	return appendKV(b, num, key, av)
}

// appendKVInt appends a KeyValue with an int value as field num.
func appendKVInt(b []byte, num protowire.Number, key string, val int64) []byte {
	av := protowire.AppendVarint(protowire.AppendTag(nil, fAnyInt, protowire.VarintType), uint64(val))
	return appendKV(b, num, key, av)
}

// appendKV appends a KeyValue as field num; av is the encoded AnyValue. It
// allocates: it encodes what is precomputed, not what is per span.
func appendKV(b []byte, num protowire.Number, key string, av []byte) []byte {
	kv := protowire.SizeTag(fKVKey) + protowire.SizeBytes(len(key)) + protowire.SizeTag(fKVValue) + protowire.SizeBytes(len(av))
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(kv))
	b = protowire.AppendTag(b, fKVKey, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, fKVValue, protowire.BytesType)
	return protowire.AppendBytes(b, av)
}

// Precomputed pieces shared by every span.
var (
	kindField   = protowire.AppendVarint(protowire.AppendTag(nil, fSpanKind, protowire.VarintType), spanKindInternal)
	errorStatus = appendStatus(nil, "the function returned a non-nil error")
	panicStatus = appendStatus(nil, "the function panicked")
	// errorTypeOther is error.type "_OTHER": the record says that an error was
	// returned, not its type (the conventions' value for an unknown type).
	errorTypeOther = appendKVString(nil, fSpanAttributes, attrErrorType, "_OTHER")
	errorTypePanic = appendKVString(nil, fSpanAttributes, attrErrorType, "panic")
	// panicEventAttrs are the exception event's attributes: the record says
	// that the call ended by panicking, not with which value.
	panicEventAttrs = appendKVString(appendKVString(nil, fEventAttributes, attrExcType, "panic"),
		fEventAttributes, attrExcMsg, "the function panicked (tigris records no panic value)")
)

func appendStatus(b []byte, msg string) []byte {
	body := protowire.SizeTag(fStatusMessage) + protowire.SizeBytes(len(msg)) + protowire.SizeTag(fStatusCode) + protowire.SizeVarint(statusCodeError)
	b = protowire.AppendTag(b, fSpanStatus, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(body))
	b = protowire.AppendTag(b, fStatusMessage, protowire.BytesType)
	b = protowire.AppendString(b, msg)
	b = protowire.AppendTag(b, fStatusCode, protowire.VarintType)
	return protowire.AppendVarint(b, statusCodeError)
}

// Tags of the fields appendSpan writes itself (field number << 3 | wire type).
const (
	tagTraceID = fSpanTraceID<<3 | 2
	tagSpanID  = fSpanSpanID<<3 | 2
	tagParent  = fSpanParentID<<3 | 2
	tagStart   = fSpanStart<<3 | 1
	tagEnd     = fSpanEnd<<3 | 1
	tagSpans   = fSSSpans<<3 | 2
)

// intAttr is a KeyValue with an int value whose bytes before the value are
// precomputed: a span's int attributes cost a few appends.
type intAttrEnc struct {
	tag byte   // the attributes field's tag (Span's or Link's)
	key []byte // KeyValue.key field: tag, length, bytes
}

func newIntAttr(field protowire.Number, key string) intAttrEnc {
	b := protowire.AppendTag(nil, fKVKey, protowire.BytesType)
	return intAttrEnc{tag: byte(protowire.EncodeTag(field, protowire.BytesType)), key: protowire.AppendString(b, key)}
}

// size is the bytes of the attribute field (tag and length included) for v.
func (a *intAttrEnc) size(v int64) int {
	n := varintLen(uint64(v))
	kv := len(a.key) + 3 + n // value: tag, length, AnyValue{tag, varint}
	return 1 + varintLen(uint64(kv)) + kv
}

func (a *intAttrEnc) append(b []byte, v int64) []byte {
	n := varintLen(uint64(v))
	kv := len(a.key) + 3 + n
	b = append(b, a.tag)
	b = appendVarint(b, uint64(kv))
	b = append(b, a.key...)
	b = append(b, fKVValue<<3|2, byte(1+n), fAnyInt<<3|0)
	return appendVarint(b, uint64(v))
}

var (
	threadAttr  = newIntAttr(fSpanAttributes, attrThread)
	sizeAttr    = newIntAttr(fSpanAttributes, attrSize)
	missingAttr = newIntAttr(fSpanAttributes, attrMissing)
	// linkMissingAttr: on a link, the levels between the linked call and the
	// function whose go statement it was that have no record.
	linkMissingAttr = newIntAttr(fLinkAttributes, attrMissing)
	// panicEvent is the exception event without its time.
	panicEventTail = protowire.AppendString(protowire.AppendTag(nil, fEventName, protowire.BytesType), "exception")
)

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendSpan appends one span as field fSSSpans of a ScopeSpans. Its size is
// computed first, so the span is written in place.
func appendSpan(b []byte, st *stream, s *spanItem) []byte {
	r := &s.rec
	size := 2 + 16 + 2 + 8 + len(s.pe.fields) + len(kindField) + 2*(1+8) + threadAttr.size(int64(r.GID))
	if s.hasParent || s.remote != nil {
		size += 2 + 8
	}
	if r.Flags&writer.FlagSize != 0 {
		size += sizeAttr.size(r.Size)
	}
	if s.missing > 0 {
		size += missingAttr.size(int64(s.missing))
	}
	link := 0
	if s.link != nil {
		link = linkSize(s.link)
		size += 1 + varintLen(uint64(link)) + link
	}
	ev := 1 + 8 + len(panicEventTail) + len(panicEventAttrs)
	switch {
	case r.Flags&writer.FlagPanic != 0:
		size += len(errorTypePanic) + 1 + varintLen(uint64(ev)) + ev + len(panicStatus)
	case r.Flags&writer.FlagError != 0:
		size += len(errorTypeOther) + len(errorStatus)
	}
	b = append(b, tagSpans)
	b = appendVarint(b, uint64(size))
	tid, lo := traceIDOf(st.id, r.Trace, s.remote)
	b = append(b, tagTraceID, 16)
	b = append(b, tid[:]...)
	b = append(b, tagSpanID, 8)
	b = binary.BigEndian.AppendUint64(b, spanIDOf(lo, r.EOI))
	switch {
	case s.hasParent:
		b = append(b, tagParent, 8)
		b = binary.BigEndian.AppendUint64(b, spanIDOf(lo, s.parent))
	case s.remote != nil:
		// A root of a trace that joined: under the request's span.
		b = append(b, tagParent, 8)
		b = append(b, s.remote.SpanID[:]...)
	}
	b = append(b, s.pe.fields...)
	b = append(b, kindField...)
	start, end := st.wall(r.TIn), st.wall(r.TOut)
	b = append(b, tagStart)
	b = binary.LittleEndian.AppendUint64(b, start)
	b = append(b, tagEnd)
	b = binary.LittleEndian.AppendUint64(b, end)
	b = threadAttr.append(b, int64(r.GID))
	if r.Flags&writer.FlagSize != 0 {
		b = sizeAttr.append(b, r.Size)
	}
	if s.missing > 0 {
		b = missingAttr.append(b, int64(s.missing))
	}
	if s.link != nil {
		b = append(b, fSpanLinks<<3|2)
		b = appendVarint(b, uint64(link))
		b = appendLink(b, st.id, s.link, s.linkRemote)
	}
	switch {
	case r.Flags&writer.FlagPanic != 0:
		b = append(b, errorTypePanic...)
		b = append(b, fSpanEvents<<3|2)
		b = appendVarint(b, uint64(ev))
		b = append(b, fEventTime<<3|1)
		b = binary.LittleEndian.AppendUint64(b, end)
		b = append(b, panicEventTail...)
		b = append(b, panicEventAttrs...)
		b = append(b, panicStatus...)
	case r.Flags&writer.FlagError != 0:
		b = append(b, errorTypeOther...)
		b = append(b, errorStatus...)
	}
	return b
}

// linkSize is the size of the Link message of l.
func linkSize(l *spanLink) int {
	n := 2 + 16 + 2 + 8
	if l.missing > 0 {
		n += linkMissingAttr.size(int64(l.missing))
	}
	return n
}

// appendLink appends the body of a Link message to the call l names in
// stream: its trace and span ids are those the call's own span has (m is
// the remote parent of l's trace, nil for none).
func appendLink(b []byte, stream uint64, l *spanLink, m *writer.Remote) []byte {
	tid, lo := traceIDOf(stream, l.trace, m)
	b = append(b, fLinkTraceID<<3|2, 16)
	b = append(b, tid[:]...)
	b = append(b, fLinkSpanID<<3|2, 8)
	b = binary.BigEndian.AppendUint64(b, spanIDOf(lo, l.eoi))
	if l.missing > 0 {
		b = linkMissingAttr.append(b, int64(l.missing))
	}
	return b
}

// wrapSpans returns the bytes that go before and after spans (the encoded
// spans of one resource) to make them one ResourceSpans field of an
// ExportTraceServiceRequest: the body is head, spans, tail, so the spans are
// never copied again.
func wrapSpans(resource, scope []byte, spansLen int) (head, tail []byte) {
	schema := protowire.AppendString(protowire.AppendTag(nil, fSSSchemaURL, protowire.BytesType), SchemaURL)
	ss := len(scope) + spansLen + len(schema)
	rsSchema := protowire.AppendString(protowire.AppendTag(nil, fRSSchemaURL, protowire.BytesType), SchemaURL)
	rs := len(resource) + protowire.SizeTag(fRSScopeSpans) + protowire.SizeBytes(ss) + len(rsSchema)
	head = protowire.AppendTag(head, fReqResourceSpans, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(rs))
	head = append(head, resource...)
	head = protowire.AppendTag(head, fRSScopeSpans, protowire.BytesType)
	head = protowire.AppendVarint(head, uint64(ss))
	head = append(head, scope...)
	tail = append(schema, rsSchema...)
	return head, tail
}

// encodeResource encodes a Resource message as field fRSResource.
func encodeResource(attrs []kv) []byte {
	var body []byte
	for _, a := range attrs {
		if a.isInt {
			body = appendKVInt(body, fResourceAttributes, a.key, a.i)
		} else {
			body = appendKVString(body, fResourceAttributes, a.key, a.s)
		}
	}
	b := protowire.AppendTag(nil, fRSResource, protowire.BytesType)
	return append(protowire.AppendVarint(b, uint64(len(body))), body...)
}

// encodeScope encodes the InstrumentationScope as field fSSScope.
func encodeScope(version string) []byte {
	var body []byte
	body = protowire.AppendTag(body, fScopeName, protowire.BytesType)
	body = protowire.AppendString(body, ScopeName)
	body = protowire.AppendTag(body, fScopeVersion, protowire.BytesType)
	body = protowire.AppendString(body, version)
	b := protowire.AppendTag(nil, fSSScope, protowire.BytesType)
	return append(protowire.AppendVarint(b, uint64(len(body))), body...)
}

// ScopeName is the instrumentation scope of everything tigris exports.
const ScopeName = "github.com/tigrisgo/tigris/export"

// kv is one resource attribute.
type kv struct {
	key   string
	s     string
	i     int64
	isInt bool
}
