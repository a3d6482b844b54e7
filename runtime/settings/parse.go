package settings

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Modes lists the probe modes in the order help texts show them.
var Modes = []Mode{Off, Coarse, Fine}

// WriterModes lists the writer modes in the order help texts show them.
var WriterModes = []WriterMode{WriterAsync, WriterSync, WriterNull}

// OnFulls lists the queue-full policies in the order help texts show them.
var OnFulls = []OnFull{Drop, Block}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return m == Off || m == Coarse || m == Fine }

// Valid reports whether m is one of WriterModes.
func (m WriterMode) Valid() bool { return m == WriterAsync || m == WriterSync || m == WriterNull }

// Valid reports whether o is one of OnFulls.
func (o OnFull) Valid() bool { return o == Drop || o == Block }

// ParseMode parses a probe mode: off, coarse or fine (case-insensitive).
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	if !m.Valid() {
		return "", fmt.Errorf("%q is not a mode (want %s)", s, alternatives(Modes))
	}
	return m, nil
}

// ParseWriterMode parses a writer mode: async, sync or null (case-insensitive).
func ParseWriterMode(s string) (WriterMode, error) {
	m := WriterMode(strings.ToLower(strings.TrimSpace(s)))
	if !m.Valid() {
		return "", fmt.Errorf("%q is not a writer mode (want %s)", s, alternatives(WriterModes))
	}
	return m, nil
}

// ParseOnFull parses a queue-full policy: drop or block (case-insensitive).
func ParseOnFull(s string) (OnFull, error) {
	o := OnFull(strings.ToLower(strings.TrimSpace(s)))
	if !o.Valid() {
		return "", fmt.Errorf("%q is not a queue-full policy (want %s)", s, alternatives(OnFulls))
	}
	return o, nil
}

// alternatives formats a list of allowed values as "a, b or c".
func alternatives[T ~string](vs []T) string {
	var b strings.Builder
	for i, v := range vs {
		switch {
		case i == 0:
		case i == len(vs)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// ParseBool parses an on/off switch: on, off, true, false, yes, no, 1 or 0
// (case-insensitive).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a switch (want on or off, true or false)", s)
}

// ParsePercent parses a share written as a percentage ("10%", "2.5 %") or as a
// fraction ("0.1") and returns the fraction (0.1). It checks the syntax and that the
// number is finite, not its range: sampling and budget have different ranges, which
// Validate checks.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if rest, ok := strings.CutSuffix(t, "%"); ok {
		t, div = strings.TrimSpace(rest), 100
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(t, "_xXpP") {
		return 0, fmt.Errorf("%q is not a percentage (want e.g. 10%% or 0.1)", s)
	}
	return f / div, nil
}

// FormatPercent formats a fraction as a percentage for messages and templates:
// 0.1 → "10%". It rounds to 10 significant digits so 0.07 prints as "7%".
func FormatPercent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f*100, 'g', 10, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64) + "%"
}

// sizeUnits are the byte-size suffixes ParseSize accepts, lower-cased. Decimal units
// (kB, MB, GB, TB) are powers of 1000, binary units (KiB, MiB, GiB, TiB) powers of
// 1024, as in IEC 80000-13.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseSize parses a byte size: a plain number of bytes ("1048576") or a number with
// a unit, decimal ("1GB" = 10⁹, "500kB") or binary ("256MiB" = 256·2²⁰). Units are
// case-insensitive; a space may separate number and unit; a fraction is allowed
// ("1.5GiB") and rounded down to whole bytes.
func ParseSize(s string) (int64, error) {
	bad := func() (int64, error) {
		return 0, fmt.Errorf("%q is not a size (want e.g. 256MiB, 1GB or a number of bytes)", s)
	}
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return bad()
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("%q is not a size (too large)", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return bad()
	}
	v := math.Floor(f * float64(mult))
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size (too large)", s)
	}
	return int64(v), nil
}

// FormatSize formats a byte count with the largest unit that divides it exactly,
// binary before decimal: 268435456 → "256MiB", 1000000000 → "1GB", 1234 → "1234".
func FormatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		mult   int64
	}{
		{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
		{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3},
	} {
		if n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseQueue parses a queue length: an integer as Go writes it (1024, 0x400,
// 1_024), as YAML integers are. Its range is Validate's job (Limits).
func ParseQueue(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 0, 0)
	if err != nil {
		return 0, fmt.Errorf("%q is not a queue length (want an integer from 1 to %d)", s, MaxQueue)
	}
	return int(n), nil
}

// ParseCount parses a whole number (a limit such as queries.max).
func ParseCount(s string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 0)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return int(n), nil
}

// ParseRotate parses a rotation size: a size (ParseSize), or off, never, none
// or 0 for no rotation.
func ParseRotate(s string) (int64, error) {
	if isOff(s) {
		return 0, nil
	}
	return ParseSize(s)
}

// ParseBudget parses an overhead budget: a percentage (ParsePercent), or off,
// none or 0 for no budget.
func ParseBudget(s string) (float64, error) {
	if isOff(s) {
		return 0, nil
	}
	return ParsePercent(s)
}

// isOff reports whether s is one of the words that turn a setting off.
func isOff(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "none", "never", "0":
		return true
	}
	return false
}

// ParseDuration parses a Go duration string ("2m", "30s", "1h30m", "500ms"). It does
// not check the sign; Validate does.
func ParseDuration(s string) (Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (want e.g. 2m, 30s or 1h30m)", s)
	}
	return Duration(d), nil
}

// String formats d like time.Duration: "2m0s".
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText encodes d as a Go duration string, which makes JSON use a string too.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON encodes d as a JSON string holding a Go duration: "2m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON decodes a JSON string holding a Go duration. A JSON number is
// rejected rather than guessed at (nanoseconds? seconds?).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a duration (want a string such as \"2m\" or \"30s\")", b)
	}
	return d.UnmarshalText([]byte(s))
}

// ParseRules parses the compact rule list of TIGRIS_RULES:
//
//	fine:execution(* shop/repo.*(..)); off:execution(* shop/repo.(*Store).Ping(..))
//
// Rules are separated by ';' or newlines and each is mode:pattern, split at the first
// ':'; spaces around either part are ignored, empty items are skipped (so "none" is
// not needed to write an empty list, but ParseRules accepts "none" for clarity). The
// pattern is not parsed here.
func ParseRules(s string) ([]Rule, error) {
	if strings.EqualFold(strings.TrimSpace(s), "none") {
		return []Rule{}, nil
	}
	rules := []Rule{}
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		m, pat, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("rule %q has no mode (want mode:pattern, e.g. fine:execution(* shop/repo.*(..)))", item)
		}
		mode, err := ParseMode(m)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", item, err)
		}
		pat = strings.TrimSpace(pat)
		if pat == "" {
			return nil, fmt.Errorf("rule %q has no pattern (want mode:pattern, e.g. fine:execution(* shop/repo.*(..)))", item)
		}
		rules = append(rules, Rule{Pattern: pat, Mode: mode})
	}
	return rules, nil
}

// FormatRules formats rules in ParseRules' syntax.
func FormatRules(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = string(r.Mode) + ":" + r.Pattern
	}
	return strings.Join(parts, "; ")
}
