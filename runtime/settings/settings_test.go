package settings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		err  string
	}{
		{in: "10%", want: 0.1},
		{in: " 2.5 % ", want: 0.025},
		{in: "0.1", want: 0.1},
		{in: "1", want: 1},
		{in: "100%", want: 1},
		{in: "0", want: 0},
		{in: "150%", want: 1.5}, // range is Validate's job
		{in: "", err: `"" is not a percentage (want e.g. 10% or 0.1)`},
		{in: "lots", err: `"lots" is not a percentage (want e.g. 10% or 0.1)`},
		{in: "NaN", err: `"NaN" is not a percentage`},
		{in: "inf%", err: `"inf%" is not a percentage`},
		{in: "0x1p-2", err: `"0x1p-2" is not a percentage`},
		{in: "%", err: `"%" is not a percentage`},
	} {
		got, err := ParsePercent(tc.in)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParsePercent(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatPercent(t *testing.T) {
	for in, want := range map[float64]string{0.1: "10%", 0.07: "7%", 1: "100%", 0: "0%", 0.025: "2.5%", 1e-9: "0.0000001%", 1.5: "150%"} {
		if got := FormatPercent(in); got != want {
			t.Errorf("FormatPercent(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string
	}{
		{in: "0", want: 0},
		{in: "1048576", want: 1 << 20},
		{in: "256MiB", want: 256 << 20},
		{in: "256 mib", want: 256 << 20},
		{in: "1GB", want: 1e9},
		{in: "1gb", want: 1e9},
		{in: "500kB", want: 500e3},
		{in: "64Ki", want: 64 << 10},
		{in: "1.5GiB", want: 3 << 29},
		{in: "2TiB", want: 2 << 40},
		{in: "12B", want: 12},
		{in: "", err: `"" is not a size (want e.g. 256MiB, 1GB or a number of bytes)`},
		{in: "MiB", err: `"MiB" is not a size`},
		{in: "12XB", err: `"12XB" is not a size`},
		{in: "-1", err: `"-1" is not a size`},
		{in: "1.2.3MB", err: `"1.2.3MB" is not a size`},
		{in: "99999999999TiB", err: `"99999999999TiB" is not a size (too large)`},
		{in: "9999999999999.5TiB", err: `"9999999999999.5TiB" is not a size (too large)`},
	} {
		got, err := ParseSize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("ParseSize(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 256 << 20: "256MiB", 1e9: "1GB", 1234: "1234", 1 << 40: "1TiB", 1500: "1500", 2000: "2kB"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
		if back, err := ParseSize(want); err != nil || back != in {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", in, back, err)
		}
	}
}

func TestParseEnums(t *testing.T) {
	if m, err := ParseMode(" Fine "); err != nil || m != Fine {
		t.Errorf("ParseMode(Fine) = %q, %v", m, err)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{err: second(ParseMode("fast")), want: `"fast" is not a mode (want off, coarse or fine)`},
		{err: second(ParseWriterMode("kafka")), want: `"kafka" is not a writer mode (want async, sync or null)`},
		{err: second(ParseOnFull("wait")), want: `"wait" is not a queue-full policy (want drop or block)`},
		{err: second(ParseBool("maybe")), want: `"maybe" is not a switch (want on or off, true or false)`},
		{err: second(ParseDuration("2 minutes")), want: `"2 minutes" is not a duration (want e.g. 2m, 30s or 1h30m)`},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("error = %v, want %s", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestParseRules(t *testing.T) {
	got, err := ParseRules("fine:execution(* a.*(..)); off : execution(* a.B(..))\n\ncoarse:x;")
	want := []Rule{{"execution(* a.*(..))", Fine}, {"execution(* a.B(..))", Off}, {"x", Coarse}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRules = %v, %v; want %v", got, err, want)
	}
	if back, _ := ParseRules(FormatRules(want)); !reflect.DeepEqual(back, want) {
		t.Errorf("ParseRules(FormatRules) = %v", back)
	}
	if got, err := ParseRules("none"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ParseRules(none) = %#v, %v; want empty", got, err)
	}
	for in, want := range map[string]string{
		"execution(* a.*(..))": `rule "execution(* a.*(..))" has no mode (want mode:pattern`,
		"fast:x":               `rule "fast:x": "fast" is not a mode (want off, coarse or fine)`,
		"fine: ":               `rule "fine:" has no pattern`,
	} {
		if _, err := ParseRules(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseRules(%q) error = %v, want %s", in, err, want)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	b, err := json.Marshal(struct{ D Duration }{Duration(90 * time.Second)})
	if err != nil || string(b) != `{"D":"1m30s"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var v struct{ D Duration }
	if err := json.Unmarshal([]byte(`{"D":"2m"}`), &v); err != nil || v.D != Duration(2*time.Minute) {
		t.Fatalf("Unmarshal = %v, %v", v.D, err)
	}
	for in, want := range map[string]string{
		`{"D":120}`:     `120 is not a duration (want a string such as "2m" or "30s")`,
		`{"D":"2 min"}`: `"2 min" is not a duration`,
	} {
		if err := json.Unmarshal([]byte(in), &v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) error = %v, want %s", in, err, want)
		}
	}
}

func TestDefaultIsValid(t *testing.T) {
	d := Default()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Runtime)
		want   string
	}{
		{"mode", func(r *Runtime) { r.Mode = "fast" }, `mode: "fast" is not a mode (want off, coarse or fine)`},
		{"rule mode", func(r *Runtime) { r.Rules = []Rule{{"x", Fine}, {"y", "on"}} }, `rules[1].mode: "on" is not a mode (want off, coarse or fine)`},
		{"rule pattern", func(r *Runtime) { r.Rules = []Rule{{" ", Fine}} }, `rules[0].pattern: empty pattern`},
		{"pointcut dup", func(r *Runtime) { r.Pointcuts = []NamedPointcut{{"a", "x"}, {"a", "y"}} }, `pointcuts[1].name: "a" is defined twice`},
		{"pointcut empty", func(r *Runtime) { r.Pointcuts = []NamedPointcut{{"", "x"}} }, `pointcuts[0].name: empty name`},
		{"pointcut expr", func(r *Runtime) { r.Pointcuts = []NamedPointcut{{"a", ""}} }, `pointcuts[0].expr: empty expression`},
		{"sampling high", func(r *Runtime) { r.Sampling = 1.5 }, `sampling: 150% is out of range (want 0% to 100%)`},
		{"sampling low", func(r *Runtime) { r.Sampling = -0.1 }, `sampling: -10% is out of range (want 0% to 100%)`},
		{"criteria", func(r *Runtime) { r.Analysis.Enabled, r.Analysis.Criteria = true, "" }, `analysis.criteria: empty filter while analysis is enabled`},
		{"metric", func(r *Runtime) { r.Analysis.Metrics["frequent"] = "" }, `analysis.metrics.frequent: empty metric name`},
		{"interval", func(r *Runtime) { r.Analysis.Interval = 0 }, `analysis.interval: 0s is shorter than the minimum 100ms (want e.g. 2m)`},
		{"window", func(r *Runtime) { r.Analysis.Window = -1 }, `analysis.window: -1ns is negative`},
		{"budget", func(r *Runtime) { r.Analysis.Budget = 1 }, `analysis.budget: 100% is out of range (want 0% to less than 100%; 0 disables the budget)`},
		{"writer mode", func(r *Runtime) { r.Writer.Mode = "file" }, `writer.mode: "file" is not a writer mode (want async, sync or null)`},
		{"path", func(r *Runtime) { r.Writer.Path = "" }, `writer.path: empty path`},
		{"placeholder", func(r *Runtime) { r.Writer.Path = "out/{host}.tgr" }, `writer.path: "out/{host}.tgr" has an unknown placeholder {host} (want {binary}, {pid}, {time})`},
		{"unclosed", func(r *Runtime) { r.Writer.Path = "out/{pid.tgr" }, `writer.path: "out/{pid.tgr" has an unclosed {`},
		{"queue", func(r *Runtime) { r.Writer.Queue = 0 }, `writer.queue: 0 is not a queue length (want an integer from 1 to 16777216)`},
		{"on full", func(r *Runtime) { r.Writer.OnFull = "wait" }, `writer.onFull: "wait" is not a queue-full policy (want drop or block)`},
		{"rotate", func(r *Runtime) { r.Writer.Rotate = -1 }, `writer.rotate: -1 is negative`},
		{"flush", func(r *Runtime) { r.Writer.Flush = -Duration(time.Second) }, `writer.flush: -1s is shorter than the minimum 10ms`},
		{"listen no port", func(r *Runtime) { r.Admin.Listen = "localhost" }, `admin.listen: "localhost" has no port`},
		{"listen bad port", func(r *Runtime) { r.Admin.Listen = "localhost:http" }, `admin.listen: "localhost:http" has a bad port "http"`},
		{"listen ipv6", func(r *Runtime) { r.Admin.Listen = "::1:7070" }, `admin.listen: "::1:7070": an IPv6 host must be in brackets`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Default()
			tc.change(&r)
			err := r.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v\nwant %s", err, tc.want)
			}
		})
	}
	r := Default()
	r.Writer.Mode, r.Writer.Path = WriterNull, ""
	r.Admin.Listen = "[::1]:7070"
	if err := r.Validate(); err != nil {
		t.Errorf("null writer without path, IPv6 admin: %v", err)
	}
	r.Mode, r.Writer.Queue = "x", 0
	if err := r.Validate(); err == nil || err.Error() != `mode: "x" is not a mode (want off, coarse or fine); writer.queue: 0 is not a queue length (want an integer from 1 to 16777216)` {
		t.Errorf("two problems: %v", err)
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestApplyEnv(t *testing.T) {
	r := Default()
	r.Rules = []Rule{{"execution(* a.*(..))", Fine}}
	err := ApplyEnv(&r, env(map[string]string{
		"TIGRIS_MODE":        "fine",
		"TIGRIS_RULES":       "+off:execution(* a.B(..))",
		"TIGRIS_SAMPLING":    "10%",
		"TIGRIS_SUMMARIES":   "on",
		"TIGRIS_ANALYSIS":    "yes",
		"TIGRIS_CRITERIA":    "most expensive",
		"TIGRIS_METRICS":     "expensive=p99-time, concurrent = active",
		"TIGRIS_INTERVAL":    "30s",
		"TIGRIS_WINDOW":      "10m",
		"TIGRIS_BUDGET":      "2%",
		"TIGRIS_WRITER":      "sync",
		"TIGRIS_OUT":         "/tmp/{binary}.tgr",
		"TIGRIS_QUEUE":       "1024",
		"TIGRIS_ON_FULL":     "block",
		"TIGRIS_ROTATE":      "1GB",
		"TIGRIS_FLUSH":       "250ms",
		"TIGRIS_ADMIN":       "127.0.0.1:7070",
		"TIGRIS_ADMIN_TOKEN": "s3cret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Mode = Fine
	want.Rules = []Rule{{"execution(* a.*(..))", Fine}, {"execution(* a.B(..))", Off}}
	want.Sampling = 0.1
	want.Summaries = true
	want.Analysis = Analysis{
		Enabled:  true,
		Criteria: "most expensive",
		Metrics:  Default().Analysis.Metrics,
		Interval: Duration(30 * time.Second),
		Window:   Duration(10 * time.Minute),
		Budget:   0.02,
	}
	want.Analysis.Metrics["expensive"] = "p99-time"
	want.Analysis.Metrics["concurrent"] = "active"
	want.Writer = Writer{Mode: WriterSync, Path: "/tmp/{binary}.tgr", Queue: 1024, OnFull: Block, Rotate: 1e9, Flush: Duration(250 * time.Millisecond)}
	want.Admin = Admin{Listen: "127.0.0.1:7070", Token: "s3cret"}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("ApplyEnv:\n got %+v\nwant %+v", r, want)
	}

	// Off values and replacing rules.
	err = ApplyEnv(&r, env(map[string]string{"TIGRIS_ADMIN": "off", "TIGRIS_ROTATE": "off", "TIGRIS_BUDGET": "off", "TIGRIS_RULES": "coarse:x"}))
	if err != nil || r.Admin.Listen != "" || r.Writer.Rotate != 0 || r.Analysis.Budget != 0 || len(r.Rules) != 1 || r.Rules[0].Pattern != "x" {
		t.Errorf("off values: %v, %+v", err, r)
	}
	if err := ApplyEnv(&r, env(map[string]string{"TIGRIS_RULES": "none"})); err != nil || len(r.Rules) != 0 {
		t.Errorf("TIGRIS_RULES=none: %v, %v", err, r.Rules)
	}
}

func TestApplyEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"TIGRIS_MODE": "fast"}, `TIGRIS_MODE: "fast" is not a mode (want off, coarse or fine)`},
		{map[string]string{"TIGRIS_SAMPLING": "lots"}, `TIGRIS_SAMPLING: "lots" is not a percentage (want e.g. 10% or 0.1)`},
		{map[string]string{"TIGRIS_SAMPLING": "5"}, `TIGRIS_SAMPLING: 500% is out of range (want 0% to 100%)`},
		{map[string]string{"TIGRIS_QUEUE": "0"}, `TIGRIS_QUEUE: 0 is not a queue length (want an integer from 1 to 16777216)`},
		{map[string]string{"TIGRIS_QUEUE": "many"}, `TIGRIS_QUEUE: "many" is not a queue length (want an integer from 1 to 16777216)`},
		{map[string]string{"TIGRIS_WRITER": "kafka"}, `TIGRIS_WRITER: "kafka" is not a writer mode (want async, sync or null)`},
		{map[string]string{"TIGRIS_ON_FULL": "wait"}, `TIGRIS_ON_FULL: "wait" is not a queue-full policy (want drop or block)`},
		{map[string]string{"TIGRIS_ROTATE": "big"}, `TIGRIS_ROTATE: "big" is not a size (want e.g. 256MiB, 1GB or a number of bytes)`},
		{map[string]string{"TIGRIS_FLUSH": "0s"}, `TIGRIS_FLUSH: 0s is shorter than the minimum 10ms (want e.g. 1s)`},
		{map[string]string{"TIGRIS_INTERVAL": "soon"}, `TIGRIS_INTERVAL: "soon" is not a duration (want e.g. 2m, 30s or 1h30m)`},
		{map[string]string{"TIGRIS_WINDOW": "-1m"}, `TIGRIS_WINDOW: -1m0s is negative (want 0 for one interval, or e.g. 10m)`},
		{map[string]string{"TIGRIS_BUDGET": "100%"}, `TIGRIS_BUDGET: 100% is out of range (want 0% to less than 100%; 0 disables the budget)`},
		{map[string]string{"TIGRIS_ANALYSIS": "sometimes"}, `TIGRIS_ANALYSIS: "sometimes" is not a switch (want on or off, true or false)`},
		{map[string]string{"TIGRIS_SUMMARIES": "2"}, `TIGRIS_SUMMARIES: "2" is not a switch`},
		{map[string]string{"TIGRIS_METRICS": "expensive"}, `TIGRIS_METRICS: "expensive" is not a binding (want criterion=metric, e.g. expensive=mean-time)`},
		{map[string]string{"TIGRIS_RULES": "fine"}, `TIGRIS_RULES: rule "fine" has no mode`},
		{map[string]string{"TIGRIS_ADMIN": "7070"}, `TIGRIS_ADMIN: "7070" has no port (want host:port such as 127.0.0.1:7070 or :7070, or empty for off)`},
		{map[string]string{"TIGRIS_OUT": "x/{host}"}, `TIGRIS_OUT: "x/{host}" has an unknown placeholder {host}`},
		{map[string]string{"TIGRIS_MODE": "fast", "TIGRIS_QUEUE": "-1"}, `TIGRIS_MODE: "fast" is not a mode (want off, coarse or fine); TIGRIS_QUEUE: -1 is not a queue length (want an integer from 1 to 16777216)`},
	} {
		r := Default()
		before := r.Clone()
		err := ApplyEnv(&r, env(tc.vars))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("ApplyEnv(%v) = %v\nwant %s", tc.vars, err, tc.want)
		}
		if !reflect.DeepEqual(r, before) {
			t.Errorf("ApplyEnv(%v) changed r on error", tc.vars)
		}
	}
}

func TestApplyEnvKeepsMetricsOfCaller(t *testing.T) {
	r := Default()
	shared := r.Analysis.Metrics
	if err := ApplyEnv(&r, env(map[string]string{"TIGRIS_METRICS": "frequent=rate"})); err != nil {
		t.Fatal(err)
	}
	if shared["frequent"] != "count" {
		t.Errorf("ApplyEnv wrote through to the caller's map: %v", shared)
	}
}

func TestEnvVarsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range EnvVars {
		if !strings.HasPrefix(v.Name, "TIGRIS_") || v.Field == "" || v.Syntax == "" || v.Help == "" || v.set == nil || seen[v.Name] {
			t.Errorf("incomplete or duplicate EnvVar %+v", v)
		}
		seen[v.Name] = true
	}
}

func TestEncodeDecode(t *testing.T) {
	r := Default()
	r.Pointcuts = []NamedPointcut{{"repo", "execution(* shop/repo.*(..))"}}
	r.Rules = []Rule{{"repo", Fine}, {"execution(* shop/repo.Ping(..))", Off}}
	r.Sampling = 0.1
	r.Summaries = true
	r.Analysis.Enabled = true
	r.Analysis.Window = Duration(10 * time.Minute)
	r.Analysis.Budget = 0.02
	r.Writer.Rotate = 256 << 20
	r.Admin = Admin{Listen: ":7070", Token: "t"}
	for _, in := range []Runtime{Default(), r} {
		s, err := in.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s, "\n") || !strings.HasPrefix(s, `{"format":1,`) {
			t.Errorf("Encode = %s", s)
		}
		out, err := Decode(s)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Errorf("round trip:\n  in %+v\n out %+v\n via %s", in, out, s)
		}
		if s2, _ := out.Encode(); s2 != s {
			t.Errorf("Encode not stable:\n%s\n%s", s, s2)
		}
	}

	bad := Default()
	bad.Sampling = 2
	if _, err := bad.Encode(); err == nil || err.Error() != "encoding settings: sampling: 200% is out of range (want 0% to 100%)" {
		t.Errorf("Encode(invalid) = %v", err)
	}
	for in, want := range map[string]string{
		`{"format":2}`: "decoding settings: format 2, want 1 (the binary was built by an incompatible tigris)",
		`{"format":1,"mode":"coarse","writer":{"mode":"async","path":"x","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"0s"}}`: "decoding settings: analysis.interval: 0s is shorter than the minimum 100ms (want e.g. 2m)",
		`not json`: "decoding settings: invalid character",
	} {
		if _, err := Decode(in); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Decode(%s) = %v\nwant %s", in, err, want)
		}
	}
}
