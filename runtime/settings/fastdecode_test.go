package settings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// full is a Runtime with every field set, as Encode writes it.
func full() Runtime {
	r := Default()
	r.Mode = Fine
	r.Pointcuts = []NamedPointcut{{Name: "repo", Expr: "execution(* shop/repo.*(..))"}, {Name: "ch", Expr: "execution(* *(<-chan int))"}}
	r.Rules = []Rule{{Pattern: "repo", Mode: Off}, {Pattern: "execution(* shop.Ünïcode(..))", Mode: Coarse}}
	r.Sampling, r.Summaries, r.FollowParent, r.CoarseBudget = 0.25, true, true, 0.5
	r.Analysis.Enabled, r.Analysis.Window, r.Analysis.Budget = true, Duration(5*time.Minute), 0.03
	r.Writer.Rotate, r.Writer.Mode, r.Writer.OnFull = 1<<30, WriterSync, Drop
	r.Admin = Admin{Listen: "127.0.0.1:7070", Token: "t0k3n"}
	r.Queries = Queries{Max: 3, MaxProbes: 50, Budget: 0.1}
	return r
}

// TestDecodeFastAgreesWithJSON: what decodeFast takes it decodes as
// encoding/json does, and it takes what Encode writes of the default and of
// settings with every field set (but a string with an escape, which
// encoding/json decodes).
func TestDecodeFastAgreesWithJSON(t *testing.T) {
	def, all := Default(), full()
	a, err := def.Encode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := all.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := decodeFast(a); !ok {
		t.Errorf("the default's encoding takes the slow path: %s", a)
	}
	if _, ok := decodeFast(strings.Replace(b, `\u003c`, "", 1)); !ok {
		t.Errorf("the full encoding takes the slow path: %s", b)
	}
	inputs := []string{a, b, strings.Replace(b, `\u003c`, "", 1), `{"format":1}`, ` { "format" : 1 , "rules" : [ ] , "pointcuts":[] } `,
		`{"format":1,"analysis":{"metrics":{}}}`, `{"format":1,"Mode":"fine"}`, `{"format":1,"mode":"fine","mode":"off"}`,
		`{"format":1,"sampling":1e-1}`, `{"format":1,"sampling":01}`, `{"format":1,"writer":{"queue":1.0}}`, `{"format":1,"unknown":2}`,
		`{"format":1,"admin":null}`, `{"format":1} x`, `{"format":1,"mode":"\xff"}`, `{"format":1,"analysis":{"interval":"2x"}}`,
		`{"format":1,"summaries":true,"followParent":false}`, `{"format":-0}`, `{"format":1,"sampling":-}`, ``, `[]`}
	for _, s := range inputs {
		agree(t, s)
	}
}

func agree(t *testing.T, s string) {
	t.Helper()
	got, ok := decodeFast(s)
	if !ok {
		return
	}
	var want encoded
	if err := json.Unmarshal([]byte(s), &want); err != nil {
		t.Errorf("decodeFast took %q, which encoding/json rejects: %v", s, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decodeFast(%q) = %+v; encoding/json: %+v", s, got, want)
	}
}

func FuzzDecodeFast(f *testing.F) {
	def, all := Default(), full()
	for _, r := range []Runtime{def, all} {
		s, err := r.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s)
	}
	f.Add(`{"format":1,"rules":[]}`)
	f.Fuzz(func(t *testing.T, s string) { agree(t, s) })
}

// TestDecodeFastCost: decoding the default settings allocates a few times,
// not the hundreds encoding/json's first use does.
func TestDecodeFastCost(t *testing.T) {
	def := Default()
	s, err := def.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(10, func() { decodeFast(s) }); n > 24 {
		t.Errorf("decodeFast allocates %v times", n)
	}
}
