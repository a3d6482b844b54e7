package human

import (
	"fmt"
	"time"
)

// Ns formats nanoseconds with three significant digits: 87ns, 1.23µs, 456ms;
// "0" below one nanosecond (and for NaN).
func Ns(ns float64) string {
	if !(ns >= 1) {
		return "0"
	}
	d, unit := time.Duration(ns), time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}

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
