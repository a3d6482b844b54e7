package admintest

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
)

// The probes Server registers, in id order, with their calls: Find 30 times,
// Save 20, Ping 10. Find returns an error result.
const (
	Find = "shop.example/shop.(*Store).Find() error"
	Save = "shop.example/shop.Save()"
	Ping = "shop.example/shop.Ping()"
)

var (
	probes   = make([]monitor.Probe, 3)
	infos    = []monitor.ProbeInfo{{Package: "shop.example/shop", Recv: "Store", RecvPtr: true, Name: "Find", Results: []string{"error"}, File: "shop.go", Line: 3}, {Package: "shop.example/shop", Name: "Save", File: "shop.go", Line: 9}, {Package: "shop.example/shop", Name: "Ping", File: "shop.go", Line: 12}}
	register sync.Once
)

// Server serves the admin API on a loopback port until the test ends and
// returns its URL. token, when not "", is required for changes. The probes are
// registered and called at the first call; the rules, the sampling rate and
// the analysis settings a test changes are restored when it ends.
func Server(t testing.TB, token string) string {
	t.Helper()
	register.Do(func() {
		monitor.Register(`{"format":1,"mode":"coarse","sampling":1,"writer":{"mode":"null","queue":1,"onFull":"drop","flush":"1s"},"analysis":{"interval":"1m"}}`, probes, infos)
		for i := range 30 {
			for j := range probes[:1+i%3] {
				if c := monitor.Enter(&probes[j]); c.On() {
					c.Exit(nil)
				}
			}
		}
	})
	orig := analyzer.Analysis()
	t.Cleanup(func() {
		monitor.SetRules(nil)
		monitor.SetSampling(1)
		analyzer.SetAnalysis(orig)
	})
	srv := httptest.NewServer(admin.NewHandler(admin.Options{Token: token}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Call makes one call of the probe at index i (0 Find, 1 Save, 2 Ping).
func Call(i int) {
	if c := monitor.Enter(&probes[i]); c.On() {
		c.Exit(nil)
	}
}

// CallEvery calls the probe at index i every d until the test ends, for a
// query to see calls as they come.
func CallEvery(t testing.TB, i int, d time.Duration) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(d):
				Call(i)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}
