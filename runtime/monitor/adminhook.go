package monitor

import (
	"fmt"
	"sync/atomic"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// adminStarter starts the admin HTTP endpoint. Package monitor/admin sets it from
// its init, so the monitor itself never imports net/http: a program that links the
// monitor without admin (a unit test, a custom build) does not pay for a server.
var adminStarter atomic.Pointer[func(settings.Admin) error]

// SetAdminStarter installs the function that starts the admin endpoint when the
// effective settings (embedded, then TIGRIS_ADMIN / TIGRIS_ADMIN_TOKEN) have a
// listen address. Package monitor/admin calls it from init, which runs before the
// init of any instrumented package (they import admin), so before the first
// Register starts the monitor. Calling it after the monitor started has no effect
// on this run; nil removes the starter. Safe for concurrent use.
func SetAdminStarter(f func(settings.Admin) error) {
	if f == nil {
		adminStarter.Store(nil)
		return
	}
	adminStarter.Store(&f)
}

// startAdmin runs the starter, if the settings ask for an endpoint, on its own
// goroutine: start holds registry.mu and runs inside the program's init, and
// listening may resolve a host name. A failure is reported, never fatal: the
// program runs on without the endpoint.
func startAdmin(a settings.Admin) {
	if a.Listen == "" {
		return
	}
	f := adminStarter.Load()
	if f == nil {
		report(fmt.Errorf("admin endpoint %s requested, but the binary does not link github.com/tigrisgo/tigris/runtime/monitor/admin", a.Listen))
		return
	}
	go func() {
		defer recoverInternal("admin start")
		if err := (*f)(a); err != nil {
			report(fmt.Errorf("admin endpoint not started: %v", err))
		}
	}()
}
