package export

import (
	"fmt"
	"net/url"
	"strings"
)

// FromEnv fills the options the command line left unset from the standard
// OpenTelemetry environment variables: OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_COMPRESSION,
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. Headers and attributes
// given on the command line win over the variables' for the same key.
func (o *Options) FromEnv(getenv func(string) string) error {
	setIf := func(dst *string, name string) {
		if *dst == "" {
			*dst = getenv(name)
		}
	}
	setIf(&o.Endpoint, "OTEL_EXPORTER_OTLP_ENDPOINT")
	setIf(&o.TracesURL, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	setIf(&o.MetricsURL, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	setIf(&o.ServiceName, "OTEL_SERVICE_NAME")
	if c := getenv("OTEL_EXPORTER_OTLP_COMPRESSION"); c == "gzip" {
		o.Gzip = true
	} else if c != "" && c != "none" {
		return fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%q: want gzip or none", c)
	}
	var err error
	if o.Headers, err = mergeKeyValues(o.Headers, getenv("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS"); err != nil {
		return err
	}
	o.Attributes, err = mergeKeyValues(o.Attributes, getenv("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES")
	return err
}

// mergeKeyValues adds the pairs of list (W3C baggage-like "k1=v1,k2=v2",
// values percent-encoded) to m, keeping m's own.
func mergeKeyValues(m map[string]string, list, what string) (map[string]string, error) {
	kvs, err := ParseKeyValues(list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if m == nil && len(kvs) > 0 {
		m = map[string]string{}
	}
	for k, v := range kvs {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m, nil
}

// ParseKeyValues parses "k1=v1,k2=v2" with percent-encoded values, the
// syntax of OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS.
func ParseKeyValues(list string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(list, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", item)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("value of %s: %w", k, err)
		}
		out[k] = dv
	}
	return out, nil
}
