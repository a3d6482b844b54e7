package num

import (
	"math"
	"testing"
)

func TestMinMax(t *testing.T) {
	if Min(3, 2) != 2 || Min(2, 3) != 2 || Max(3, 2) != 3 || Max(2, 3) != 3 {
		t.Fatal("ints")
	}
	if Min("b", "a") != "a" || Max("a", "b") != "b" {
		t.Fatal("strings")
	}
	nan := math.NaN()
	for _, got := range []float64{Min(nan, 1), Min(1, nan), Max(nan, 1), Max(1, nan)} {
		if !math.IsNaN(got) {
			t.Errorf("got %v with a NaN argument, want NaN (as the builtins)", got)
		}
	}
}
