package dsl

import (
	"fmt"
	"strings"
)

// Level is one of the five partitions a criterion's values are grouped into, and
// also the modifier word of a [FilterDef] ("more frequent" has Modifier More).
//
// Levels are ordered from Least (-2) to Most (+2) with Plain, the middle
// partition, as the zero value, so a FilterDef without a modifier has Modifier
// Plain and reversing a metric's direction is a negation.
type Level int8

// The five levels, lowest to highest, and NoLevel for a value that was not grouped.
const (
	Least Level = -2
	Less  Level = -1
	Plain Level = 0 // the middle partition; written as no modifier
	More  Level = 1
	Most  Level = 2

	// NoLevel is the level of a candidate whose value was not grouped because it
	// was missing, NaN or infinite. It matches no FilterDef.
	NoLevel Level = -128
)

// Levels lists the five levels from Least to Most.
var Levels = [5]Level{Least, Less, Plain, More, Most}

// Valid reports whether l is one of the five levels (not NoLevel).
func (l Level) Valid() bool { return l >= Least && l <= Most }

// String returns the modifier word ("least", "less", "more", "most"), "plain" for
// the middle partition and "none" for NoLevel.
func (l Level) String() string {
	switch l {
	case Least:
		return "least"
	case Less:
		return "less"
	case Plain:
		return "plain"
	case More:
		return "more"
	case Most:
		return "most"
	case NoLevel:
		return "none"
	}
	return fmt.Sprintf("Level(%d)", int8(l))
}

// MarshalText encodes l as its String.
func (l Level) MarshalText() ([]byte, error) {
	if !l.Valid() && l != NoLevel {
		return nil, fmt.Errorf("invalid level %d", int8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText decodes a level word as written by MarshalText.
func (l *Level) UnmarshalText(b []byte) error {
	v, ok := levelWords[strings.ToLower(string(b))]
	if !ok {
		if string(b) == "none" {
			*l = NoLevel
			return nil
		}
		return fmt.Errorf("unknown level %q (want least, less, plain, more, most or none)", b)
	}
	*l = v
	return nil
}

// Capture implements participle.Capture for the modifier of a FilterDef.
func (l *Level) Capture(values []string) error {
	v, ok := levelWords[strings.ToLower(strings.Join(values, ""))]
	if !ok || v == Plain {
		return fmt.Errorf("unknown modifier %q", strings.Join(values, ""))
	}
	*l = v
	return nil
}

var levelWords = map[string]Level{
	"least": Least,
	"less":  Less,
	"plain": Plain,
	"more":  More,
	"most":  Most,
}

// reverse mirrors a level around Plain: the level of the same value for a metric
// whose higher values mean less of the criterion.
func (l Level) reverse() Level {
	if !l.Valid() {
		return l
	}
	return -l
}

// Selects reports whether a FilterDef with modifier l selects a candidate whose
// value lies in partition p. The comparatives are inclusive: "more" selects More
// and Most, "less" selects Less and Least; "most", "least" and no modifier (Plain)
// select exactly their own partition. NoLevel is never selected.
//
// The inclusive reading is the only one under which the paper's worked example
// (Table 7) selects findVets, whose frequency is in the Most partition, for
// "more frequent"; see docs/dsl.md.
func (l Level) Selects(p Level) bool {
	if !p.Valid() {
		return false
	}
	switch l {
	case More:
		return p >= More
	case Less:
		return p <= Less
	default:
		return p == l
	}
}
