package live

import (
	"errors"
	"strings"
	"testing"
)

// TestQueryThatCanProduceNothingRefused: a query no probe of the program
// can feed is refused when it is posted, saying why, instead of waiting
// for tuples that cannot come; nothing is switched on.
func TestQueryThatCanProduceNothingRefused(t *testing.T) {
	setup(t)
	before := strings.Join(modes(), ",")
	reg := NewRegistry(fastOptions())
	_, err := reg.Post(`SELECT time, duration FROM calls WHERE function = '…/shop.(*Store).Find' AND duration > 1ms LIMIT 5`, false)
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("posted: %v", err)
	}
	const want = "query refused: it can produce nothing, now or later: calls: no probe matches function = '…/shop.(*Store).Find'; probes have function like 'test.example/shop.(*Store).Find'"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant %q…", err, want)
	}
	if got := strings.Join(modes(), ","); got != before {
		t.Errorf("modes %s, were %s", got, before)
	}
	if len(reg.List()) != 0 {
		t.Errorf("a query is listed: %+v", reg.List()[0].Info())
	}
	// EXPLAIN says the same and runs nothing.
	posted, err := reg.Post(`EXPLAIN SELECT name FROM calls WHERE name = 'Nope'`, false)
	if err != nil || !strings.Contains(posted[0].Plan.Explain(), "produces nothing: calls: no probe matches name = 'Nope'") {
		t.Fatalf("explain: %v\n%v", err, posted)
	}
}
