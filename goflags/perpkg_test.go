package goflags

import (
	"slices"
	"testing"
)

func TestSplitJoin(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"-N -l", []string{"-N", "-l"}},
		{"  -m\t-N  ", []string{"-m", "-N"}},
		{`-X 'main.v=a b' "-d=x y"`, []string{"-X", "main.v=a b", "-d=x y"}},
		{`'it"s'`, []string{`it"s`}},
	} {
		got, err := Split(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.want == nil {
			continue
		}
		joined, err := Join(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Split(joined); err != nil || !slices.Equal(again, tc.want) {
			t.Errorf("Split(Join(%q)) = %q, %v", tc.want, again, err)
		}
	}
	if _, err := Split(`-X 'open`); err == nil {
		t.Error("an unterminated quote was accepted")
	}
	if _, err := Join([]string{`a'b "c`}); err == nil {
		t.Error("a word with both quotes and a space was joined")
	}
}

func TestPerPackage(t *testing.T) {
	const cwd = "/src/m"
	pkgs := map[string]Package{
		"main":   {ImportPath: "example.com/m", Dir: "/src/m", Cmdline: true},
		"sub":    {ImportPath: "example.com/m/sub", Dir: "/src/m/sub"},
		"deep":   {ImportPath: "example.com/m/sub/deep", Dir: "/src/m/sub/deep"},
		"other":  {ImportPath: "example.org/x", Dir: "/mod/x"},
		"fmt":    {ImportPath: "fmt", Dir: "/goroot/src/fmt", Standard: true},
		"vendor": {ImportPath: "example.com/m/vendor/v", Dir: "/src/m/vendor/v"},
	}
	for _, tc := range []struct {
		name   string
		values []string
		want   map[string][]string // package → flags; missing means nil
	}{
		{"no pattern: command-line packages", []string{"-N -l"}, map[string][]string{"main": {"-N", "-l"}}},
		{"all", []string{"all=-m"}, map[string][]string{"main": {"-m"}, "sub": {"-m"}, "deep": {"-m"}, "other": {"-m"}, "fmt": {"-m"}, "vendor": {"-m"}}},
		{"std", []string{"std=-B"}, map[string][]string{"fmt": {"-B"}}},
		{"last match wins", []string{"all=-m", "example.com/m/sub=-N"}, map[string][]string{
			"main": {"-m"}, "sub": {"-N"}, "deep": {"-m"}, "other": {"-m"}, "fmt": {"-m"}, "vendor": {"-m"},
		}},
		{"wildcard includes the root, not vendor", []string{"example.com/m/...=-l"}, map[string][]string{"main": {"-l"}, "sub": {"-l"}, "deep": {"-l"}}},
		{"relative", []string{"./sub/...=-l"}, map[string][]string{"sub": {"-l"}, "deep": {"-l"}}},
		{"relative exact", []string{"./sub=-l"}, map[string][]string{"sub": {"-l"}}},
		{"empty resets", []string{"-m", ""}, map[string][]string{"main": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f PerPackage
			for _, v := range tc.values {
				if err := f.Set(v, cwd); err != nil {
					t.Fatal(err)
				}
			}
			for name, p := range pkgs {
				got, want := f.For(p), tc.want[name]
				if (got == nil) != (want == nil) || !slices.Equal(got, want) {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
		})
	}
	var f PerPackage
	for _, bad := range []string{"=x", "pattern", `"all=-m"`} {
		if err := f.Set(bad, cwd); err == nil {
			t.Errorf("Set(%q) succeeded", bad)
		}
	}
}
