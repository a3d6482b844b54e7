// Package adminclient is the Go client of the admin HTTP API that instrumented
// programs serve (package runtime/monitor/admin; docs/admin-api.md). `tigris
// ctl`, the PetClinic evaluation and demo, and tests talk to running programs
// through it, so every caller shares one way to reach an endpoint, decode its
// replies and explain its errors.
//
// The wire types are the server's own (admin.ProbeList, admin.StatsList, ...):
// client and server agree by construction. The client lives in the root module,
// not beside the server, because package admin is linked into every
// instrumented binary and must stay small; nothing here is.
//
// # Use
//
//	c, err := adminclient.New("127.0.0.1:7070", adminclient.Options{Token: token})
//	if err != nil {
//		return err // not a host:port or URL
//	}
//	st, err := c.Stats(ctx, adminclient.StatsQuery{Sort: "total", Top: 10})
//	...
//	_, err = c.AddRule(ctx, settings.Rule{Pattern: "execution(* shop/repo.*(..))", Mode: settings.Fine})
//
// # Errors
//
// A reply with a status of 300 or more is an [*Error]: the program's message,
// and for a syntax error in a pattern or filter the expression with a caret
// under the column. A program that cannot be reached gives an error that says
// so and how to make it listen (TIGRIS_ADMIN).
//
// [Client.Program] names the program that answers (binary, pid, Go version,
// uptime), "unknown program" for one too old to name its binary; an address
// where another server answers is a [*NotAdminError]. `tigris ctl` prints it
// at the head of every output.
//
// # Concurrency
//
// A Client may be used by several goroutines at once; [Options.Raw] is then
// written from each of them.
package adminclient
