package export

import "testing"

// A function literal's probe signature (monitor.ProbeInfo.Signature) gives
// its spans and series the literal's Go name, as runtime.FuncForPC and
// pprof print it.
func TestFunctionNameLiteral(t *testing.T) {
	for sig, want := range map[string]string{
		"example.com/shop/web.NewHandler.func1(net/http.ResponseWriter, *net/http.Request)": "example.com/shop/web.NewHandler.func1",
		"example.com/x.(*Stack[...]).Pop.func1() (T, bool)":                                 "example.com/x.(*Stack[...]).Pop.func1",
		"example.com/x.Map[...].func2.1(T) string":                                          "example.com/x.Map[...].func2.1",
		"example.com/x.init.0.func1()":                                                      "example.com/x.init.0.func1",
		"example.com/x.Walk-range1.1(int) bool":                                             "example.com/x.Walk-range1.1",
	} {
		if got := FunctionName(sig); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", sig, got, want)
		}
	}
}
