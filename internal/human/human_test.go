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

// TestHumanForms pins the forms a person reads on every surface.
func TestHumanForms(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Percent(0.4661608583), "46.6%"},
		{Duration(11039087524), "11s"},
		{Ns(2.713e5), "271µs"},
		{Num(1.372e6), "1.37M"},
		{Num(1657), "1657"},
		{Rate(167043.2, "fine calls"), "167k fine calls/s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestUnrounded(t *testing.T) {
	for s, want := range map[string]bool{"46.61608583% in force": true, "window 11.039087524s": true, "mean-time 2.713e+05": true, "cuts 1657 | 3925 | 1.372e+06": true,
		"46.6% in force": false, "window 11s": false, "mean-time 271µs": false, "cuts 1657 | 3925 | 1.37M": false, "0.0000562": false, "0.00123%": false} {
		if got := Unrounded.MatchString(s); got != want {
			t.Errorf("Unrounded.MatchString(%q) = %v, want %v", s, got, want)
		}
	}
}
