package sorted

import (
	"slices"
	"strings"
	"testing"
)

func TestKeys(t *testing.T) {
	m := map[string]int{"b": 1, "a": 2, "c": 3}
	if got := Keys(m); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Keys = %v", got)
	}
	if got := KeysFunc(m, func(a, b string) int { return strings.Compare(b, a) }); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("KeysFunc descending = %v", got)
	}
	if got := Keys(map[int]bool{}); got == nil || len(got) != 0 {
		t.Errorf("Keys of an empty map = %#v, want an empty slice", got)
	}
}
