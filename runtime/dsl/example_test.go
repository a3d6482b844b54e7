package dsl_test

import (
	"fmt"

	"github.com/tigrisgo/tigris/runtime/dsl"
)

// The paper's running example (Table 7): which PetClinic methods are worth
// caching?
func ExampleEvaluate() {
	f, err := dsl.Parse("(more frequent | most expensive) & least changeable")
	if err != nil {
		panic(err)
	}
	names := []string{"findOwner", "updateOwner", "newVisit", "findVets", "findAll"}
	c := dsl.Candidates{
		IDs: []uint32{0, 1, 2, 3, 4},
		Values: map[string][]float64{
			"count":          {12, 2, 50, 200, 100},     // frequent
			"mean-time":      {180, 500, 250, 300, 200}, // expensive
			"result-size-sd": {6, 0, 12, 200, 90},       // changeable (higher is less)
		},
	}
	r, err := dsl.Evaluate(f, c, dsl.DefaultBinding())
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Filter)
	for _, id := range r.Selected {
		l := r.Levels(id)
		fmt.Println(names[id], l["frequent"], "frequent,", l["expensive"], "expensive,", l["changeable"], "changeable")
	}
	fmt.Println(r.Grouping("frequent").Partition.Normality.Reason)
	// Output:
	// (more frequent ∪ most expensive) ∩ least changeable
	// findVets most frequent, more expensive, least changeable
	// 5 values < 20: too few to rely on a normality test: quantiles
}

func ExampleParse_error() {
	_, err := dsl.Parse("more frequent ∪ cheap")
	fmt.Println(err)
	// Output:
	// 1:17: unknown criterion "cheap" (valid: frequent, maintainable, expensive, changeable, error-prone, usage-pattern, state-variation, concurrent, latent)
}

func ExampleGroup() {
	p := dsl.Group([]float64{2, 12, 50, 100, 200})
	for _, x := range []float64{2, 12, 50, 100, 200} {
		l, _ := p.Level(x)
		fmt.Printf("%v:%v\n", x, l)
	}
	fmt.Println(p.Method, p.Cuts[0].Value, p.Cuts[1].Value, p.Cuts[2].Value, p.Cuts[3].Value)
	// Output:
	// 2:least
	// 12:less
	// 50:plain
	// 100:more
	// 200:most
	// quantiles 7 12 100 150
}
