package human

import (
	"math"
	"testing"
	"time"
)

func TestNs(t *testing.T) {
	for ns, want := range map[float64]string{0: "0", 0.5: "0", 87: "87ns", 1234: "1.23µs", 1234567: "1.23ms", 12345678901: "12.3s", 999999: "1ms"} {
		if got := Ns(ns); got != want {
			t.Errorf("Ns(%v) = %s; want %s", ns, got, want)
		}
	}
	if got := Ns(math.NaN()); got != "0" {
		t.Errorf("Ns(NaN) = %s; want 0", got)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12345: "12.3 kB", 4_500_000: "4.5 MB", 1_200_000_000: "1.2 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %s; want %s", n, got, want)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 1499 * time.Millisecond: "0:01", 65 * time.Second: "1:05", 3723 * time.Second: "1:02:03"} {
		if got := Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
}
