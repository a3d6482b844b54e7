package config_test

import (
	"errors"
	"fmt"

	"github.com/tigrisgo/tigris/config"
)

func ExampleParse() {
	cfg, err := config.Parse("tigris.yaml", []byte(`
pointcuts:
  repo: execution(* example.com/shop/repo.*(..))
monitor:
  include: [repo]
  sampling: 10%
writer:
  rotate: 256MiB
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Include, cfg.Runtime.Sampling, cfg.Runtime.Writer.Rotate)
	// Output: [repo] 0.1 268435456
}

func ExampleErrorList() {
	_, err := config.Parse("tigris.yaml", []byte(`
monitor:
  mode: fast
writer:
  on-full: wait
`))
	var list config.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Println(e)
		}
	}
	// Output:
	// tigris.yaml:3:9: monitor.mode: "fast" is not a mode (want off, coarse or fine)
	// tigris.yaml:5:12: writer.on-full: "wait" is not a queue-full policy (want drop or block)
}
