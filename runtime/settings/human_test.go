package settings

import (
	"math"
	"testing"
)

func TestHumanNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1.234e-13, "0.000000000000123"}, {0.00005623, "0.0000562"}, {-0.00005623, "-0.0000562"}, {0.001234, "0.00123"}, {0.5, "0.5"}, {1, "1"}, {2.713, "2.71"}, {42, "42"},
		{46.61608583, "46.6"}, {999.96, "1000"}, {1657, "1657"}, {3925.4, "3925"}, {12345, "12.3k"},
		{137_000, "137k"}, {999_600, "1M"}, {1.372e6, "1.37M"}, {2.5e9, "2.5G"}, {-1.372e6, "-1.37M"},
		{math.NaN(), "unknown"}, {math.Inf(1), "∞"}, {1e21, "1000E"},
	} {
		if got := HumanNum(c.v); got != c.want {
			t.Errorf("HumanNum(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestHumanPercent(t *testing.T) {
	for share, want := range map[float64]string{0: "0%", 0.4661608583: "46.6%", 0.054: "5.4%", 0.00123456: "0.123%", 1: "100%", 0.0001: "0.01%", 1e-7: "0.00001%"} {
		if got := HumanPercent(share); got != want {
			t.Errorf("HumanPercent(%v) = %q, want %q", share, got, want)
		}
	}
}

func TestHumanNs(t *testing.T) {
	for ns, want := range map[float64]string{0: "0", 0.4: "0", 87: "87ns", 12.34: "12.3ns", 999.6: "1µs", 1234: "1.23µs", 271_300: "271µs", 11_039_087_524: "11s",
		125e9: "2m5s", -1_234_000: "-1.23ms", 1e19: "10G" + "s"} {
		if got := HumanNs(ns); got != want {
			t.Errorf("HumanNs(%v) = %q, want %q", ns, got, want)
		}
	}
	if got := HumanNs(math.NaN()); got != "0" {
		t.Errorf("HumanNs(NaN) = %q, want 0", got)
	}
}
