package pointcut

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The assertions the package's tests use, with testify's names, written here
// because the runtime module is in every user's module graph: a test-only
// requirement of it (testify, and yaml through it) would raise the version a
// user's own module selects (tigris init's go get would upgrade it).
var (
	assert  = checker{}
	require = checker{fatal: true}
)

// checker reports a failed assertion with Errorf, or with Fatalf when fatal.
type checker struct{ fatal bool }

// fail reports what went wrong, followed by the caller's message: msg is a
// format and its arguments, or a single value.
func (c checker) fail(t testing.TB, what string, msg []any) bool {
	t.Helper()
	if len(msg) > 0 {
		if f, ok := msg[0].(string); ok {
			what += ": " + fmt.Sprintf(f, msg[1:]...)
		} else {
			what += ": " + fmt.Sprint(msg...)
		}
	}
	if c.fatal {
		t.Fatal(what)
	}
	t.Error(what)
	return false
}

func (c checker) Equal(t testing.TB, want, got any, msg ...any) bool {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return true
	}
	return c.fail(t, fmt.Sprintf("got %#v, want %#v", got, want), msg)
}

func (c checker) True(t testing.TB, v bool, msg ...any) bool {
	t.Helper()
	if v {
		return true
	}
	return c.fail(t, "false, want true", msg)
}

func (c checker) False(t testing.TB, v bool, msg ...any) bool {
	t.Helper()
	if !v {
		return true
	}
	return c.fail(t, "true, want false", msg)
}

func (c checker) Nil(t testing.TB, v any, msg ...any) bool {
	t.Helper()
	if isNil(v) {
		return true
	}
	return c.fail(t, fmt.Sprintf("got %#v, want nil", v), msg)
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice, reflect.UnsafePointer:
		return r.IsNil()
	}
	return false
}

func (c checker) NoError(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err == nil {
		return true
	}
	return c.fail(t, fmt.Sprintf("unexpected error: %v", err), msg)
}

func (c checker) Error(t testing.TB, err error, msg ...any) bool {
	t.Helper()
	if err != nil {
		return true
	}
	return c.fail(t, "no error, want one", msg)
}

func (c checker) EqualError(t testing.TB, err error, want string, msg ...any) bool {
	t.Helper()
	if err != nil && err.Error() == want {
		return true
	}
	return c.fail(t, fmt.Sprintf("error %v, want %q", err, want), msg)
}

func (c checker) Contains(t testing.TB, s, sub string, msg ...any) bool {
	t.Helper()
	if strings.Contains(s, sub) {
		return true
	}
	return c.fail(t, fmt.Sprintf("%q does not contain %q", s, sub), msg)
}

func (c checker) NotContains(t testing.TB, s, sub string, msg ...any) bool {
	t.Helper()
	if !strings.Contains(s, sub) {
		return true
	}
	return c.fail(t, fmt.Sprintf("%q contains %q", s, sub), msg)
}

func (c checker) Less(t testing.TB, a, b uint64, msg ...any) bool {
	t.Helper()
	if a < b {
		return true
	}
	return c.fail(t, fmt.Sprintf("%d is not less than %d", a, b), msg)
}

func (c checker) Len(t testing.TB, v any, n int, msg ...any) bool {
	t.Helper()
	if l := reflect.ValueOf(v).Len(); l != n {
		return c.fail(t, fmt.Sprintf("length %d, want %d", l, n), msg)
	}
	return true
}

func (c checker) NotEmpty(t testing.TB, s string, msg ...any) bool {
	t.Helper()
	if s != "" {
		return true
	}
	return c.fail(t, "empty", msg)
}
