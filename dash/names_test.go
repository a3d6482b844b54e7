package dash

import "testing"

func TestNames(t *testing.T) {
	for _, c := range []struct{ sig, name, short string }{
		{"example.com/shop.(*Store).Find(int) (string, error)", "example.com/shop.(*Store).Find", "shop.(*Store).Find"},
		{"github.com/a/b/service.(*ClinicService).FindOwners(context.Context, string) ([]model.Owner, error)", "github.com/a/b/service.(*ClinicService).FindOwners", "service.(*ClinicService).FindOwners"},
		{"example.com/x.Map[...](func(int) int) []int", "example.com/x.Map[...]", "x.Map[...]"},
		{"example.com/x.(*Tree[...]).Insert(int)", "example.com/x.(*Tree[...]).Insert", "x.(*Tree[...]).Insert"},
		{"main.main()", "main.main", "main.main"},
		{"probe#7", "probe#7", "probe#7"},
	} {
		if got := funcName(c.sig); got != c.name {
			t.Errorf("funcName(%q) = %q, want %q", c.sig, got, c.name)
		}
		if got := shortName(c.sig); got != c.short {
			t.Errorf("shortName(%q) = %q, want %q", c.sig, got, c.short)
		}
	}
	if got := patternOf("example.com/shop.(*Store).Find(int) error"); got != "execution(* example.com/shop.(*Store).Find(..))" {
		t.Errorf("patternOf: %s", got)
	}
}
