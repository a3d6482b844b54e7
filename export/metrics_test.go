package export

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/internal/admintest"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// TestMetricsFromAdmin polls an admin endpoint that has a token (reading
// needs none; the shipper sends it anyway) and checks the request against
// what the endpoint says: one point per function with calls, named by
// code.function.name, the duration's count and sum, a histogram without
// bounds, cumulative from the program's start, and the resource.
func TestMetricsFromAdmin(t *testing.T) {
	for _, token := range []string{"", "s3cr3t"} {
		addr := admintest.Server(t, "s3cr3t")
		r := otlptest.New(t)
		o := Options{Admin: addr, AdminToken: token, Endpoint: r.URL, Once: true, ServiceName: "shop", Attributes: map[string]string{"deployment.environment.name": "test"}}
		st, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if st.MetricPolls != 1 || st.MetricsSent != 1 || st.PollErrors != 0 {
			t.Fatalf("token %q: stats %+v", token, st)
		}
		c, _ := adminclient.New(addr, adminclient.Options{})
		stats, err := c.Stats(context.Background(), adminclient.StatsQuery{Sort: "id"})
		if err != nil {
			t.Fatal(err)
		}
		reqs := r.Metrics()
		if len(reqs) != 1 || len(reqs[0].ResourceMetrics) != 1 {
			t.Fatalf("%d metric requests", len(reqs))
		}
		rm := reqs[0].ResourceMetrics[0]
		res := otlptest.Attrs(rm.Resource.Attributes)
		host, _ := os.Hostname()
		if res["service.name"] != "shop" || res["deployment.environment.name"] != "test" || res["process.pid"] == "" ||
			res["host.name"] != host || res["service.instance.id"] != InstanceID(host, os.Getpid()) {
			t.Errorf("resource %v", res)
		}
		if rm.SchemaUrl != SchemaURL || rm.ScopeMetrics[0].Scope.Name != ScopeName {
			t.Errorf("schema %q scope %v", rm.SchemaUrl, rm.ScopeMetrics[0].Scope)
		}
		byName := map[string]*metricspb.Metric{}
		for _, m := range rm.ScopeMetrics[0].Metrics {
			byName[m.Name] = m
		}
		h := byName["tigris.function.duration"].GetHistogram()
		if h == nil || h.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE || byName["tigris.function.duration"].Unit != "s" {
			t.Fatalf("duration: %v", byName["tigris.function.duration"])
		}
		points := map[string]*metricspb.HistogramDataPoint{}
		for _, p := range h.DataPoints {
			points[otlptest.Attrs(p.Attributes)["code.function.name"]] = p
		}
		want := 0
		for _, s := range stats.Stats {
			if s.Count == 0 {
				continue
			}
			want++
			p := points[FunctionName(s.Signature)]
			if p == nil {
				t.Errorf("no point for %s", FunctionName(s.Signature))
				continue
			}
			if p.Count != s.Count || p.GetSum() <= 0 || len(p.ExplicitBounds) != 0 || len(p.BucketCounts) != 1 || p.BucketCounts[0] != p.Count ||
				p.StartTimeUnixNano == 0 || p.StartTimeUnixNano >= p.TimeUnixNano {
				t.Errorf("%s: point %v, admin count %d", FunctionName(s.Signature), p, s.Count)
			}
		}
		if want == 0 || len(points) != want {
			t.Errorf("%d points for %d functions with calls", len(points), want)
		}
		for _, name := range []string{"tigris.function.errors", "tigris.function.panics"} {
			if m := byName[name]; m == nil || !m.GetSum().GetIsMonotonic() || len(m.GetSum().DataPoints) != want {
				t.Errorf("%s: %v", name, m)
			}
		}
	}
}

// TestMetricsStart: a program's counters are cumulative from its start,
// which stays put while it runs and moves when the program restarts, also
// with the same pid (pid 1 of a container).
func TestMetricsStart(t *testing.T) {
	var m metricsPoller
	now := uint64(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s1 := m.startOf(1, 100, now)
	if s2 := m.startOf(1, 110.001, now+10e9); s2 != s1 {
		t.Errorf("the same run: start moved from %d to %d", s1, s2)
	}
	if s3 := m.startOf(1, 2, now+20e9); s3 != now+18e9 {
		t.Errorf("restarted with the same pid: start %d, want %d", s3, now+18e9)
	}
	if s4 := m.startOf(7, 50, now+30e9); s4 != now-20e9 {
		t.Errorf("another pid: start %d, want %d", s4, now-20e9)
	}
}

// TestRemoteAdminResource: an admin endpoint on another machine gives no
// host.name or executable of this one.
func TestRemoteAdminResource(t *testing.T) {
	host, _ := os.Hostname()
	for addr, local := range map[string]bool{"127.0.0.1:7070": true, "localhost:7070": true, "[::1]:7070": true, "0.0.0.0:7070": true, "192.0.2.10:7070": false, "collector.example:7070": false} {
		m, err := newMetricsPoller(&Options{Admin: addr}, host)
		if err != nil {
			t.Fatal(err)
		}
		if m.local != local {
			t.Errorf("%s: local %v, want %v", addr, m.local, local)
		}
	}
}
