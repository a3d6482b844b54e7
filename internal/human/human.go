package human

import (
	"fmt"
	"regexp"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// Ns formats nanoseconds with three significant digits: 87ns, 1.23µs, 456ms,
// 11s; "0" below one nanosecond (and for NaN).
func Ns(ns float64) string { return settings.HumanNs(ns) }

// Duration formats d with three significant digits: 271µs, 11s, 2m5s.
func Duration(d time.Duration) string { return settings.HumanNs(float64(d)) }

// Num formats a count, rate or mean with three significant digits: 0.00123,
// 2.71, 42; whole below 10,000 (1657); 12.3k, 1.37M beyond.
func Num(v float64) string { return settings.HumanNum(v) }

// Percent formats a share (1 is 100%) with three significant digits: 46.6%.
func Percent(share float64) string { return settings.HumanPercent(share) }

// Unrounded matches what a number printed without rounding looks like: more
// than three significant digits in a fraction (46.61608583, 11.039087524s)
// or an exponent (1.372e+06). Tests scan the outputs people read with it.
var Unrounded = regexp.MustCompile(`\.0*[1-9]\d{3,}|\de[+-]\d\d`)

// Rate formats events per second: "12.3k calls/s" for Rate(12345, "calls").
func Rate(perSec float64, what string) string { return Num(perSec) + " " + what + "/s" }

// Bytes formats n bytes with a decimal unit: 512 B, 12.3 kB, 4.5 MB, 1.2 GB.
func Bytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// Clock formats d as m:ss, or h:mm:ss from an hour on, rounded to the second.
func Clock(d time.Duration) string {
	sec := int64(d.Round(time.Second) / time.Second)
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}
