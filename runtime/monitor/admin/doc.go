// Package admin is the admin HTTP endpoint of programs built with admin.link: a
// JSON API under /tigris/v1/ to see and switch monitoring while the program
// runs, and the coarse statistics in the Prometheus text format on /metrics. `tigris ctl` is its
// command-line client; docs/admin-api.md is the reference of every endpoint.
//
// # How it starts
//
// An instrumented binary links this package when tigris.yaml links the endpoint
// (admin.link, on by default when admin.listen is set): the generated probe
// tables then pass [Launch] to the monitor as monitor.Links.Admin. The monitor
// calls it when it starts (at the first probe registration, still inside the
// program's init) if the effective settings have a listen address: tigris.yaml's
// admin.listen, overridden by TIGRIS_ADMIN and TIGRIS_ADMIN_TOKEN. Launch runs on
// a goroutine of its own and prints one line to stderr,
//
//	tigris: admin endpoint on http://127.0.0.1:7070/tigris/v1/
//
// A failure (port in use, an exposed address without a token) is reported on
// stderr and the program runs on without the endpoint.
//
// A program may also serve the API itself: [Start] with an address, or
// [NewHandler] mounted on its own server.
//
// # Safety
//
//   - Loopback only, unless a token is set: [Start] refuses an address that is
//     not loopback (":7070", "0.0.0.0:7070", a public IP or a name resolving to
//     one) without a token.
//   - With a token, every mutating request (POST, PUT, DELETE) must carry
//     "Authorization: Bearer <token>" (the scheme in any case, RFC 9110); the
//     comparison is constant-time (over SHA-256 sums, so not even the length
//     leaks). Reads stay open, as metrics scrapers expect: on an exposed
//     address, anyone who can connect sees the probe signatures and statistics.
//   - Bodies are limited to [MaxBody] bytes (413 beyond) and must arrive within
//     5 s (408), at most 16 at once (503); headers to 16 KiB; the server has
//     read, write and idle timeouts. At most four handlers run at once, more
//     requests wait; a body is read before its request takes a slot and a
//     reply is sent, within 10 s, after the slot is free, so slow clients hold
//     no slot, and GET health takes none at all.
//   - Manual rules stop at settings.MaxRules (409 for one more); sampling and
//     analysis settings get the same range checks as tigris.yaml and TIGRIS_*
//     (package settings, Limits).
//   - Handlers only call the monitor's public API, which holds its lock briefly
//     and never on the probes' hot path, so no client, however many or slow, can
//     stall the program's instrumented functions. A panic in a handler becomes a
//     500 reply and a line on stderr.
//   - A bad request changes nothing: patterns, modes, rates and criteria are
//     validated first, and the 400 reply ([ErrorBody]) names the field and, for a
//     syntax error, the line and column inside the expression.
//   - Mutating requests are serialised, so concurrent clients never lose each
//     other's rule changes, and DELETE rules/{i} reports exactly the rule it
//     removed.
//
// # Endpoints
//
//	GET    /tigris/v1/                  the endpoint list
//	GET    /tigris/v1/probes            ?pointcut= ?mode=
//	GET    /tigris/v1/rules             configured and manual rules
//	POST   /tigris/v1/rules             {"pattern": "...", "mode": "fine"} → 201
//	PUT    /tigris/v1/rules             {"rules": [...]} replaces the manual rules
//	DELETE /tigris/v1/rules/{i}         removes manual rule i
//	GET    /tigris/v1/sampling          PUT {"sampling": "10%"}
//	GET    /tigris/v1/analysis          PUT: fields given change, the others stay
//	POST   /tigris/v1/analysis/run      one cycle now
//	GET    /tigris/v1/analysis/history  the recent cycles
//	GET    /tigris/v1/stats             ?sort= ?order= ?top= ?pointcut= ?mode=
//	GET    /tigris/v1/writer            writer counters and current file
//	GET    /tigris/v1/writer/recent     ?bytes= the recent fine records, a trace stream
//	POST   /tigris/v1/auth              would a change be accepted (checks the token only)
//	GET    /tigris/v1/health            liveness and a summary
//	GET    /metrics                     Prometheus text format (also /tigris/v1/metrics)
//
// The wire types ([RuleList], [StatsList], [WriterState], ...) are exported so
// clients decode exactly what the server encodes.
package admin
