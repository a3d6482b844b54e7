package query

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Type is the type of a column or an expression.
type Type uint8

const (
	Null     Type = iota // no value (an aggregate of no rows, a missing field)
	Bool                 // true or false
	Int                  // a 64-bit integer
	Float                // a 64-bit float
	String               // text
	Duration             // nanoseconds
	Time                 // Unix nanoseconds (wall clock)
)

var typeNames = [...]string{"null", "bool", "int", "float", "string", "duration", "time"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText writes the type's name, as in JSON results.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a type's name.
func (t *Type) UnmarshalText(b []byte) error {
	for i, n := range typeNames {
		if n == string(b) {
			*t = Type(i)
			return nil
		}
	}
	return fmt.Errorf("%q is not a type of query values", b)
}

// numeric reports whether t is int or float.
func (t Type) numeric() bool { return t == Int || t == Float }

// Value is one typed value. It is a plain struct, so rows of values cost no
// allocation per field: Bool, Int, Duration and Time use I (Bool 0 or 1),
// Float uses F, String uses S.
type Value struct {
	T Type
	I int64
	F float64
	S string
}

// Constructors.
func BoolValue(b bool) Value {
	if b {
		return Value{T: Bool, I: 1}
	}
	return Value{T: Bool}
}
func IntValue(i int64) Value              { return Value{T: Int, I: i} }
func FloatValue(f float64) Value          { return Value{T: Float, F: f} }
func StringValue(s string) Value          { return Value{T: String, S: s} }
func DurationValue(d time.Duration) Value { return Value{T: Duration, I: int64(d)} }
func TimeValue(unixNs int64) Value        { return Value{T: Time, I: unixNs} }

// Truth is whether v is the boolean true; null and everything else is false.
func (v Value) Truth() bool { return v.T == Bool && v.I != 0 }

// Num is v as a float64 (ints, durations and times too); NaN for others.
func (v Value) Num() float64 {
	switch v.T {
	case Float:
		return v.F
	case Int, Duration, Time, Bool:
		return float64(v.I)
	}
	return math.NaN()
}

// String renders v as a table cell: durations as Go durations, times in
// RFC 3339 with milliseconds (UTC), floats with up to 6 significant digits.
func (v Value) String() string {
	switch v.T {
	case Null:
		return "-"
	case Bool:
		return strconv.FormatBool(v.I != 0)
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Float:
		return strconv.FormatFloat(v.F, 'g', 6, 64)
	case String:
		return v.S
	case Duration:
		return time.Duration(v.I).String()
	case Time:
		return time.Unix(0, v.I).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return "?"
}

// AppendJSON appends v as JSON: durations as integer nanoseconds, times as
// RFC 3339 strings with nanoseconds, null as null.
func (v Value) AppendJSON(b []byte) []byte {
	switch v.T {
	case Bool:
		return strconv.AppendBool(b, v.I != 0)
	case Int, Duration:
		return strconv.AppendInt(b, v.I, 10)
	case Float:
		if math.IsNaN(v.F) || math.IsInf(v.F, 0) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, v.F, 'g', -1, 64)
	case String:
		return strconv.AppendQuote(b, v.S)
	case Time:
		b = append(b, '"')
		b = time.Unix(0, v.I).UTC().AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	return append(b, "null"...)
}

// Equal reports whether a and b are the same value of the same type.
func (a Value) Equal(b Value) bool { return a == b }
