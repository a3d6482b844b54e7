// Package otlptest is an OTLP/HTTP receiver for tests: it decodes every
// request with the generated types of go.opentelemetry.io/proto/otlp,
// keeps spans by id, counts those received twice, and keeps metric requests.
// export's unit tests use it in place of a Collector, and integration/export
// behind a real Collector (as the Collector's otlphttp exporter's target).
package otlptest
