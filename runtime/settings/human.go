package settings

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Quantities as people read them: three significant digits, and a unit where
// the quantity has one. The monitor's explanations (the overhead budget's
// reason, why a function was selected) use these, and tigris's command, its
// dashboard and its demo use them through internal/human, so a value reads
// the same on every surface. Machine-readable output (JSON, /metrics, CSV)
// keeps full precision and never goes through them; FormatPercent, exact,
// writes a rate a person set.

// HumanNum formats a plain number (a count, a rate, a mean) with three
// significant digits: 0.0000562, 0.5, 42, 12.3; whole below 10,000 (1657);
// with a decimal prefix from 10,000 on (12.3k, 137k, 1.37M, 2.5G). NaN is
// "unknown".
func HumanNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "unknown"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == 0:
		return "0"
	case v < 0:
		return "-" + HumanNum(-v)
	case v < 1000:
		return sig3(v)
	case v < 1e4:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	const prefixes = "kMGTPE"
	for i := range prefixes {
		scale := math.Pow(1000, float64(i+1))
		if m, _ := strconv.ParseFloat(sig3(v/scale), 64); m < 1000 || i == len(prefixes)-1 {
			return sig3(v/scale) + prefixes[i:i+1]
		}
	}
	return "∞" // not reached
}

// sig3 formats v in (0, 1000) with three significant digits, trailing zeros
// of the fraction dropped.
func sig3(v float64) string {
	decimals := 2 - int(math.Floor(math.Log10(v)))
	if decimals < 0 {
		decimals = 0
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// HumanPercent formats a share (1 is 100%) as a percentage with three
// significant digits: 46.6%, 5.4%, 0.123%, 100%.
func HumanPercent(share float64) string {
	if math.IsNaN(share) {
		return "unknown"
	}
	return HumanNum(share*100) + "%"
}

// HumanNs formats nanoseconds as a duration with three significant digits:
// 12.3ns, 87ns, 1.23µs, 271µs, 456ms, 11s, 2m5s; "0" below a nanosecond and
// for NaN.
func HumanNs(ns float64) string {
	switch {
	case ns < 0:
		if s := HumanNs(-ns); s != "0" {
			return "-" + s
		}
		return "0"
	case !(ns >= 1):
		return "0"
	case ns < 999.5:
		return sig3(ns) + "ns"
	case ns >= math.MaxInt64/2:
		return HumanNum(ns/1e9) + "s"
	}
	d, unit := time.Duration(math.Round(ns)), time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}
