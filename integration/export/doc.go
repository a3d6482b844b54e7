// Package export tests `tigris export` against the real things: an
// OpenTelemetry Collector built from its published Go modules, receiving
// from the shipper while the example service runs under load, and
// Prometheus from the distribution's packages scraping an instrumented
// program. It is apart from package integration so that its runs have a
// test timeout of their own.
//
// The Collector is built once into the user's cache directory
// (os.UserCacheDir()/tigris-itest/otelcol-<version>-<config hash>), outside
// the repository's module graph: the collector builder generates its own
// module there. A cold build takes minutes; CI builds it first with
// TestCollectorBuild and a longer timeout (.ci/run), later runs reuse it.
// Prometheus is installed with apt-get when it is missing; where neither the
// module proxy nor the package archive can be reached, the tests skip and
// say why.
package export
