package export

import (
	"testing"
)

// TestFromEnv: the standard OpenTelemetry variables fill what the options
// leave unset; what the options set wins, key by key; OTEL_SERVICE_NAME wins
// over service.name in OTEL_RESOURCE_ATTRIBUTES, which wins over the
// binary's name.
func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://collector:4318",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://prom:9090/api/v1/otlp/v1/metrics",
		"OTEL_EXPORTER_OTLP_HEADERS":          "authorization=Bearer%20abc,x-tenant=env",
		"OTEL_EXPORTER_OTLP_COMPRESSION":      "gzip",
		"OTEL_RESOURCE_ATTRIBUTES":            "service.name=from-attrs,deployment.environment.name=prod,team=a%2Cb",
	}
	o := Options{Headers: map[string]string{"x-tenant": "flag"}}
	if err := o.FromEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if o.Endpoint != "http://collector:4318" || o.MetricsURL != env["OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"] || o.TracesURL != "" || !o.Gzip {
		t.Errorf("endpoints %q %q %q gzip %v", o.Endpoint, o.TracesURL, o.MetricsURL, o.Gzip)
	}
	if o.Headers["authorization"] != "Bearer abc" || o.Headers["x-tenant"] != "flag" {
		t.Errorf("headers %v", o.Headers)
	}
	attrs := func(o *Options) map[string]string {
		m := map[string]string{}
		for _, a := range resourceAttrs(o, "h", "h", 7, "/srv/shop") {
			m[a.key] = a.s
		}
		return m
	}
	if a := attrs(&o); a["service.name"] != "from-attrs" || a["deployment.environment.name"] != "prod" || a["team"] != "a,b" || a["service.instance.id"] != InstanceID("h", 7) {
		t.Errorf("resource %v", a)
	}
	env["OTEL_SERVICE_NAME"] = "from-name"
	o2 := Options{}
	o2.FromEnv(func(k string) string { return env[k] })
	if a := attrs(&o2); a["service.name"] != "from-name" {
		t.Errorf("OTEL_SERVICE_NAME: service.name %q", a["service.name"])
	}
	if a := attrs(&Options{}); a["service.name"] != "shop" {
		t.Errorf("nothing set: service.name %q, want the binary's name", a["service.name"])
	}
	if a := attrs(&Options{InstanceID: "i-1"}); a["service.instance.id"] != "i-1" {
		t.Errorf("instance id %q", a["service.instance.id"])
	}
	bad := Options{}
	if err := bad.FromEnv(func(k string) string { return map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}[k] }); err == nil {
		t.Error("OTEL_EXPORTER_OTLP_COMPRESSION=zstd accepted")
	}
}
