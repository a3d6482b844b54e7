package monitor

import (
	"testing"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// A function literal's probe carries its whole Go name in Name: its
// signature splits it for the matcher, and Signature prints the Go name.
func TestLiteralProbeInfo(t *testing.T) {
	for _, tc := range []struct {
		in   ProbeInfo
		want string
		pc   string
	}{
		{ProbeInfo{Package: "example.com/shop/web", Name: "NewHandler.func1", Params: []string{"net/http.ResponseWriter", "*net/http.Request"}, Flags: uint32(pointcut.Literal)},
			"example.com/shop/web.NewHandler.func1(net/http.ResponseWriter, *net/http.Request)",
			"execution(* example.com/shop/web.NewHandler.func1(..))"},
		{ProbeInfo{Package: "example.com/x", Name: "Max.func2.1", Params: []string{"T"}, Flags: uint32(pointcut.Literal | pointcut.Generic)},
			"example.com/x.Max[...].func2.1(T)",
			"execution(* example.com/x.Max[...].func2.*(..))"},
		{ProbeInfo{Package: "example.com/x", Recv: "Stack", RecvPtr: true, Name: "Pop.func1", Flags: uint32(pointcut.Literal | pointcut.Generic)},
			"example.com/x.(*Stack[...]).Pop.func1()",
			"within(example.com/x.(*Stack)) && literal()"},
	} {
		if got := tc.in.Signature(); got != tc.want {
			t.Errorf("Signature() = %q, want %q", got, tc.want)
		}
		p, err := pointcut.Parse(tc.pc)
		if err != nil {
			t.Fatal(err)
		}
		sig := tc.in.signature()
		if !p.MatchExecution(&sig) {
			t.Errorf("%s does not select the probe of %s", tc.pc, tc.want)
		}
		if p, _ := pointcut.Parse("execution(* example.com/...*(..))"); p.MatchExecution(&sig) {
			t.Errorf("execution(* example.com/...*(..)) selects the literal %s", tc.want)
		}
	}
}
