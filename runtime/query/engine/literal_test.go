package engine

import (
	"testing"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// A trace file names a function literal's probe as Go does; the signature
// rebuilt from it is the literal's, which literal pointcuts select and
// others do not.
func TestSignatureOfLiteral(t *testing.T) {
	s := SignatureOf("example.com/x.Map[...].func2.1(T) int", "example.com/x", "", "Map.func2.1", "x.go", 9)
	if s.Name != "Map" || s.Lit != ".func2.1" || !s.Flags.Has(pointcut.Literal|pointcut.Generic) {
		t.Fatalf("SignatureOf: %+v", s)
	}
	for expr, want := range map[string]bool{
		"execution(* example.com/x.Map[...].func2.*(..))": true,
		"within(example.com/x) && literal()":              true,
		"execution(* example.com/x.*(..))":                false,
	} {
		p, err := pointcut.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MatchExecution(s); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
	}
}
