package pointcut_test

import (
	"errors"
	"fmt"

	"github.com/alecthomas/participle/v2"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

func Example() {
	env, err := pointcut.NewEnv([]pointcut.Named{
		{Name: "repo", Expr: `execution(* example.com/shop/repo.(*Store).Find*(context.Context, ..))`},
		{Name: "outbound", Expr: `call(* net/http.(*Client).Do(..)) && within(example.com/shop/...)`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	include, _ := env.Parse(`repo || outbound`)
	exclude, _ := pointcut.Parse(`test()`)
	p := pointcut.And(include, pointcut.Not(exclude))

	find := &pointcut.Signature{
		Package: "example.com/shop/repo", Recv: "Store", RecvPtr: true, Name: "FindByID",
		Params:  []string{"context.Context", "int"},
		Results: []string{"*example.com/shop/model.Owner", "error"},
		Flags:   pointcut.Exported | pointcut.Method | pointcut.ReturnsError,
	}
	do := &pointcut.Signature{
		Package: "net/http", Recv: "Client", RecvPtr: true, Name: "Do",
		Params:  []string{"*net/http.Request"},
		Results: []string{"*net/http.Response", "error"},
		Flags:   pointcut.Exported | pointcut.Method | pointcut.ReturnsError,
	}
	fmt.Println(p.MatchExecution(find))
	fmt.Println(p.MatchCall(do, find))
	fmt.Println(p.MayMatchPackage("strings"))
	fmt.Println(p)
	// Output:
	// true
	// true
	// false
	// (execution(* example.com/shop/repo.(*Store).Find*(context.Context, ..)) || call(* net/http.(*Client).Do(..)) && within(example.com/shop/...)) && !test()
}

func ExampleParse_error() {
	_, err := pointcut.Parse(`within(example.com/shop/...) && executon(* x.F(..))`)
	var perr participle.Error
	if errors.As(err, &perr) {
		fmt.Printf("column %d: %s\n", perr.Position().Column, perr.Message()[:28])
	}
	// Output:
	// column 33: unknown designator executon(
}
