// Package dash is tigris dash: a web page on a running program's monitoring
// or on a recorded trace, in the tradition of go tool pprof -http and go tool
// trace. Run serves it; docs/dashboard.md describes the page.
//
// # Sources
//
// A page is built from a [Source]:
//
//   - [Live] reads a running program through its admin API only (package
//     adminclient), every refresh, so everything the page shows and does is
//     also what tigris ctl shows and does. It keeps the last Windows readings
//     of each function for the sparklines, the program's analysis history
//     (at most 100 cycles) and, while someone looks at the page, the
//     program's recent fine records (GET writer/recent), for the latency
//     histograms and the call trees; the first page reads them itself (at
//     most 3 s) rather than leave them to the next refresh. Its memory is
//     bounded whatever the program runs for.
//   - [File] reads a trace file once, when it opens, and summarizes it
//     (traceconv.Walk): per function the counts, a latency histogram and a
//     series over windows whose width follows the run's length (30 to 60
//     of them), the slowest and latest call trees, and the analyzer
//     evaluated over the whole run and replayed over its windows. A page then
//     costs only its rendering, however many records the file holds.
//
// # The page
//
// The server renders one HTML page (html/template, assets embedded in the
// tigris command with embed: a monitored program carries none of it) with
// its charts as inline SVG drawn in Go (svg.go), a style sheet and a small
// script that refreshes the live sections in place. Nothing is loaded from
// elsewhere, so it works offline; it works without the script too.
//
// # Security
//
// The page can switch probes, so the server that serves it
//
//   - listens on loopback unless told otherwise (Run warns then);
//   - answers only requests whose Host names the loopback address it listens
//     on (or localhost), so a site whose DNS name is rebound to 127.0.0.1
//     cannot read it or post to it;
//   - accepts changes only as POST from the page itself: cross-origin
//     requests are refused by net/http's CrossOriginProtection (Sec-Fetch-Site,
//     Origin), and the form must carry this server's random form token;
//     GET requests change nothing;
//   - keeps the admin token in its client: no page, header, redirect or
//     download carries it;
//   - sends a Content-Security-Policy that allows only its own script and
//     style sheet, and forbids framing.
//
// # Query box
//
// The page has a query box when Options.Query is set ([QueryRunner]): the
// hook of tigris's query language, which this package does not depend on.
package dash
