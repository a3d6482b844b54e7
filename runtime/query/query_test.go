package query

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// TestGrammarGolden makes grammar changes visible in review; docs/queries.md
// prints the same EBNF.
func TestGrammarGolden(t *testing.T) {
	golden := filepath.Join("testdata", "grammar.ebnf")
	got := Grammar() + "\n"
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGrammarGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("grammar changed; if intended, run go test -run TestGrammarGolden -update\ngot:\n%s", got)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "queries.md"))
	if err == nil && !strings.Contains(string(doc), got) {
		t.Errorf("docs/queries.md does not hold the grammar of testdata/grammar.ebnf")
	}
}

// Canonical text: keywords upper case, one space, parentheses where needed;
// compiling the canonical text gives it back.
func TestCanonicalText(t *testing.T) {
	for in, want := range map[string]string{
		"select  count(*)  from calls where not error and (duration>5ms or panicked) group by function window 10s slide 5s limit 3": "SELECT count(*) FROM calls WHERE NOT error AND (duration > 5ms OR panicked) GROUP BY function WINDOW 10s SLIDE 5s LIMIT 3",
		"SELECT duration * 2 - 1ms AS d FROM calls":                                             "SELECT duration * 2 - 1ms AS d FROM calls",
		"SELECT (duration - 1ms) * 2 FROM calls":                                                "SELECT (duration - 1ms) * 2 FROM calls",
		"SELECT * FROM calls WHERE name NOT IN ('a', 'b''c')":                                   "SELECT * FROM calls WHERE name NOT IN ('a', 'b''c')",
		"SELECT busy FROM SAMPLE(cpu, 250ms) cu WHERE busy > 0.5":                               "SELECT busy FROM SAMPLE(cpu, 250ms) AS cu WHERE busy > 0.5",
		"select * from calls where function matches 'execution(* a.*(..))' -- trailing comment": "SELECT * FROM calls WHERE function MATCHES 'execution(* a.*(..))'",
	} {
		qs, err := Compile(in, nil)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if qs[0].Text != want {
			t.Errorf("%s\n got  %s\n want %s", in, qs[0].Text, want)
		}
		again, err := Compile(qs[0].Text, nil)
		if err != nil || again[0].Text != want {
			t.Errorf("canonical text does not compile to itself: %v %v", err, again)
		}
	}
}

// Every error names the line and column of the offending token and says
// what is wrong in words a user of the language has.
func TestErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT count(*) FORM calls", `query:1:22: unexpected token "calls"`},
		{"SELECT * FROM calls WHERE duration > 5", "query:1:27: cannot compare duration (duration) with 5 (int): write durations with a unit, as in 5ms"},
		{"SELECT * FROM cpu", "query:1:15: cpu has a value at every instant: read it as SAMPLE(cpu, 1s)"},
		{"SELECT * FROM SAMPLE(calls, 1s)", "query:1:15: calls is a stream of events, read it without SAMPLE"},
		{"SELECT * FROM SAMPLE(cpu, 1ms)", "query:1:15: sampling interval 1ms: want 10ms to 24h0m0s"},
		{"SELECT * FROM nope", `query:1:15: no stream "nope" (built in: calls, cpu, heap, goroutines, gc)`},
		{"SELECT function_name FROM calls", `query:1:8: no column "function_name"`},
		{"SELECT function, duration FROM calls GROUP BY function", "query:1:18: duration is neither grouped nor aggregated"},
		{"SELECT count(*) FROM calls WHERE count(*) > 1", "query:1:34: count is an aggregate: WHERE is applied to each tuple before grouping; put conditions on aggregates in HAVING"},
		{"SELECT function FROM calls WINDOW 10s", "query:1:28: WINDOW groups rows for aggregates"},
		{"SELECT count(*) FROM calls GROUP BY name WINDOW 10s SLIDE 1ms", "query:1:42: slide of 1ms: want 10ms to the window's 10s"},
		{"SELECT count(*) FROM calls GROUP BY name WINDOW 1h SLIDE 10ms", "puts each tuple in 360000 windows; the most is 1000"},
		{"SELECT duration FROM calls a WINDOW JOIN calls b WINDOW 1s", "query:1:8: duration is a column of both a and b: write a.duration"},
		{"SELECT * FROM calls WINDOW JOIN calls WINDOW 1s", `both sides of the join are called "calls"`},
		{"SELECT a.name FROM calls a WINDOW JOIN calls b WINDOW 1s x FOLLOWED BY b", "FOLLOWED BY names the joined sources, a and b, not x and b"},
		{"SELECT p42(duration) FROM calls", `query:1:8: no function "p42"`},
		{"SELECT percentile(duration, 2) FROM calls", "percentile's second argument is a constant quantile in (0, 1]"},
		{"SELECT * FROM calls WHERE function MATCHES 'execution(* a.*(..)'", "query:1:64: MATCHES 'execution(* a.*(..)': expected \")\" to close"},
		{"SELECT * FROM calls WHERE name LIKE 5", `query:1:37: unexpected token "5"`},
		{"SELECT * FROM calls LIMIT 0", "LIMIT 0: want 1 to 1000000"},
		{"CREATE TRIGGER t FROM calls WHEN duration > 1s BEGIN FINE 'within(a)' FOR 10ms END", "FOR 10ms: want 1s to 24h0m0s"},
		{"CREATE TRIGGER t FROM calls WHEN duration BEGIN SNAPSHOT END", "WHEN needs a condition, not a duration"},
		{"CREATE STREAM calls AS (SELECT * FROM calls)", `"calls" names a built-in stream`},
		{"CREATE STREAM s AS (SELECT count(*) FROM calls GROUP BY name)", "a stream that aggregates needs a WINDOW"},
		{"SELECT 'x\n", `query:1:8: unexpected character "'"`},
		{"SELECT *\nFROM calls\nWHERE nope > 1", `query:3:7: no column "nope"`},
		{strings.Repeat("(", 100), "parentheses nested deeper than 64"},
		{strings.Repeat("x", MaxText+1), "query text of 65537 bytes; the most is 65536"},
		{"SELECT \xff FROM calls", "not valid UTF-8"},
	} {
		_, err := Compile(tc.in, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q:\n got  %v\n want %s", tc.in, err, tc.want)
			continue
		}
		if e, ok := err.(*Error); !ok || e.Line < 1 || e.Col < 1 {
			t.Errorf("%.60q: %T without a position", tc.in, err)
		}
	}
}

func TestCaret(t *testing.T) {
	_, err := Compile("SELECT *\nFROM calls\nWHERE nope > 1", nil)
	if c := err.(*Error).Caret(); c != "WHERE nope > 1\n      ^" {
		t.Fatalf("caret:\n%s", c)
	}
}

// Streams created in one text are visible to its later statements and to
// later texts given them; a name cannot be used before it is created.
func TestDerivedStreams(t *testing.T) {
	qs, err := Compile("CREATE STREAM slow AS (SELECT function, duration FROM calls WHERE duration > 1s); SELECT count(*) FROM slow", nil)
	if err != nil || len(qs) != 2 || qs[1].Sources[0].Derived != qs[0] {
		t.Fatalf("%v %+v", err, qs)
	}
	if _, err := Compile("SELECT count(*) FROM slow", Streams{"slow": qs[0]}); err != nil {
		t.Fatal(err)
	}
	if _, err := Compile("SELECT count(*) FROM slow; CREATE STREAM slow AS (SELECT * FROM calls)", nil); err == nil {
		t.Fatal("a stream was read before it was created")
	}
}

// TestDocsNameEveryColumn: docs/queries.md describes every stream and column.
func TestDocsNameEveryColumn(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "queries.md"))
	if err != nil {
		t.Skip("no docs/queries.md: the module is not in the tigris repository")
	}
	for _, s := range Builtin {
		if !strings.Contains(string(doc), "`"+s.Name+"`") {
			t.Errorf("docs/queries.md does not name the stream %s", s.Name)
		}
		for _, c := range s.Columns {
			if !strings.Contains(string(doc), "`"+c.Name+"`") {
				t.Errorf("docs/queries.md does not name the column %s.%s", s.Name, c.Name)
			}
		}
	}
}
