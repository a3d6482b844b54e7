package export

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// The coarse statistics become OTLP metrics, cumulative since the program
// started (the admin endpoint's counters never reset while it runs).
//
// The duration of a function's calls is a histogram with no bucket bounds:
// one bucket (-Inf, +Inf), so the points carry exactly the count and the sum.
// The monitor keeps count, mean and standard deviation per function (Welford,
// a few words per function, no distribution), and buckets made up from a mean
// and a deviation would be fiction. A backend gets what a Prometheus summary
// without quantiles gives: rate(sum)/rate(count) is the recent mean
// (Prometheus: tigris_function_duration_seconds_sum / _count). Where the
// distribution matters, the fine records hold every call's duration: the
// Collector's spanmetrics connector makes exponential histograms of the spans.

// metric names and units (UCUM, as the conventions want).
const (
	mDuration    = "tigris.function.duration"
	mDurationSD  = "tigris.function.duration.stddev"
	mErrors      = "tigris.function.errors"
	mPanics      = "tigris.function.panics"
	mConcurrency = "tigris.function.concurrency"
	mWriter      = "tigris.writer.records"
	mQueued      = "tigris.writer.queued"
	mSampling    = "tigris.sampling.ratio"
)

// metricsPoller polls the admin endpoint and sends what it read.
type metricsPoller struct {
	o      *Options
	host   string
	client *adminclient.Client
	// local: the program runs on this machine (the endpoint's address is
	// one of its own), so host.name and /proc/PID/exe describe it.
	local bool
	// The program last read: its pid, start (Unix ns) and uptime. Its
	// counters are cumulative from that start.
	pid    int
	start  uint64
	uptime float64

	polls, sent, failed, pollErrors atomic.Int64
}

func newMetricsPoller(o *Options, host string) (*metricsPoller, error) {
	c, err := adminclient.New(o.Admin, adminclient.Options{Token: o.AdminToken, Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("export: admin endpoint: %w", err)
	}
	base, _ := adminclient.BaseURL(o.Admin)
	m := &metricsPoller{o: o, host: host, client: c}
	if u, err := url.Parse(base); err == nil {
		m.local = isLocalHost(u.Hostname(), host)
	}
	if !m.local {
		// Another machine's program: its host name is not ours; its
		// address names it.
		if u, err := url.Parse(base); err == nil {
			m.host = u.Hostname()
		}
	}
	return m, nil
}

// isLocalHost reports whether host (an address's host part) is this machine
// (whose name is hostname): loopback, unspecified, its name, or an address
// of one of its interfaces.
func isLocalHost(host, hostname string) bool {
	if host == "localhost" || host == hostname {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// startOf returns the start of the program read now with pid and uptime:
// the same as before unless it is another process, or the same pid whose
// uptime went back (a program restarted as pid 1 of a container), whose
// counters began again.
func (m *metricsPoller) startOf(pid int, uptime float64, now uint64) uint64 {
	if m.start == 0 || pid != m.pid || uptime < m.uptime {
		m.pid, m.start = pid, now-uint64(uptime*1e9)
	}
	m.uptime = uptime
	return m.start
}

func (m *metricsPoller) addTo(st *Stats) {
	st.MetricPolls = m.polls.Load()
	st.MetricsSent = m.sent.Load()
	st.MetricsFailed = m.failed.Load()
	st.PollErrors = m.pollErrors.Load()
}

// run polls every MetricsEvery (once with Once) until ctx ends. A request
// still failing when the next poll is due is given up: the next one carries
// the same counters, newer.
func (m *metricsPoller) run(ctx context.Context, p *poster) {
	tick := time.NewTicker(m.o.MetricsEvery)
	defer tick.Stop()
	failing := false
	for {
		body, err := m.poll(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			m.pollErrors.Add(1)
			if !failing {
				m.o.Logf("export: polling the admin endpoint: %v (retrying every %s)", err, m.o.MetricsEvery)
			}
			failing = true
		case err == nil:
			if failing {
				m.o.Logf("export: the admin endpoint answers again")
			}
			failing = false
			m.polls.Add(1)
			sctx, cancel := context.WithTimeout(ctx, m.o.MetricsEvery)
			o, _, err := p.post(sctx.Done(), m.o.MetricsURL, [][]byte{body}, false)
			cancel()
			if o == sent {
				m.sent.Add(1)
			} else {
				m.failed.Add(1)
				if err != nil {
					m.o.Logf("export: metrics not delivered: %v", err)
				}
			}
		}
		if m.o.Once {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// poll reads the endpoint and encodes an ExportMetricsServiceRequest.
func (m *metricsPoller) poll(ctx context.Context) ([]byte, error) {
	h, err := m.client.Health(ctx)
	if err != nil {
		return nil, err
	}
	stats, err := m.client.Stats(ctx, adminclient.StatsQuery{Sort: "id"})
	if err != nil {
		return nil, err
	}
	w, err := m.client.Writer(ctx)
	if err != nil {
		return nil, err
	}
	now := uint64(time.Now().UnixNano())
	start := m.startOf(h.PID, h.UptimeSeconds, now)
	var binary string
	if m.local {
		binary, _ = os.Readlink("/proc/" + strconv.Itoa(h.PID) + "/exe")
	}
	hostName := m.host
	if !m.local {
		hostName = ""
	}
	req := metricsRequest(resourceAttrs(m.o, m.host, hostName, h.PID, binary), m.o.Version, start, now, h, stats, w)
	return proto.Marshal(req)
}

// metricsRequest maps one poll of the admin endpoint to an OTLP request.
// MetricsData is ExportMetricsServiceRequest on the wire (OTLP says so), and
// its package needs no gRPC.
func metricsRequest(res []kv, version string, start, now uint64, h *admin.Health, stats *admin.StatsList, w *admin.WriterState) *metricspb.MetricsData {
	cum := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	dur := &metricspb.Histogram{AggregationTemporality: cum}
	sd := &metricspb.Gauge{}
	errs := &metricspb.Sum{AggregationTemporality: cum, IsMonotonic: true}
	panics := &metricspb.Sum{AggregationTemporality: cum, IsMonotonic: true}
	conc := &metricspb.Gauge{}
	names := map[string]int{}
	for _, s := range stats.Stats {
		names[FunctionName(s.Signature)]++
	}
	for _, s := range stats.Stats {
		if s.Count == 0 {
			continue
		}
		name := FunctionName(s.Signature)
		attrs := []*commonpb.KeyValue{strAttr(attrFunction, name)}
		if names[name] > 1 {
			// Two probes, one name (should not happen): keep them apart.
			attrs = append(attrs, intAttr(attrProbe, int64(s.ID)))
		}
		sum := s.TotalNs / 1e9
		dur.DataPoints = append(dur.DataPoints, &metricspb.HistogramDataPoint{
			Attributes: attrs, StartTimeUnixNano: start, TimeUnixNano: now,
			Count: s.Count, Sum: &sum, BucketCounts: []uint64{s.Count},
		})
		sd.DataPoints = append(sd.DataPoints, doublePoint(attrs, start, now, s.StdDevNs/1e9))
		errs.DataPoints = append(errs.DataPoints, intPoint(attrs, start, now, int64(s.Errors)))
		panics.DataPoints = append(panics.DataPoints, intPoint(attrs, start, now, int64(s.Panics)))
		conc.DataPoints = append(conc.DataPoints, doublePoint(attrs, start, now, s.Concurrency))
	}
	writerRecs := &metricspb.Sum{AggregationTemporality: cum, IsMonotonic: true, DataPoints: []*metricspb.NumberDataPoint{
		intPoint([]*commonpb.KeyValue{strAttr("tigris.writer.outcome", "written")}, start, now, int64(w.Written)),
		intPoint([]*commonpb.KeyValue{strAttr("tigris.writer.outcome", "dropped")}, start, now, int64(w.Dropped)),
	}}
	queued := &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{intPoint(nil, start, now, int64(w.Queued))}}
	sampling := &metricspb.Gauge{DataPoints: []*metricspb.NumberDataPoint{
		doublePoint([]*commonpb.KeyValue{strAttr("tigris.sampling.kind", "configured")}, start, now, h.Sampling),
		doublePoint([]*commonpb.KeyValue{strAttr("tigris.sampling.kind", "effective")}, start, now, h.EffectiveSampling),
	}}
	metrics := []*metricspb.Metric{
		{Name: mDuration, Unit: "s", Description: "Duration of the function's calls measured since the program started (count and sum; the monitor keeps no distribution).", Data: &metricspb.Metric_Histogram{Histogram: dur}},
		{Name: mDurationSD, Unit: "s", Description: "Standard deviation of the duration of the function's calls since the program started.", Data: &metricspb.Metric_Gauge{Gauge: sd}},
		{Name: mErrors, Unit: "{call}", Description: "Calls of the function that returned a non-nil error.", Data: &metricspb.Metric_Sum{Sum: errs}},
		{Name: mPanics, Unit: "{call}", Description: "Calls of the function that panicked.", Data: &metricspb.Metric_Sum{Sum: panics}},
		{Name: mConcurrency, Unit: "{goroutine}", Description: "Mean number of goroutines inside the function (arrival rate × mean duration).", Data: &metricspb.Metric_Gauge{Gauge: conc}},
		{Name: mWriter, Unit: "{record}", Description: "Fine records the program's trace writer wrote or lost.", Data: &metricspb.Metric_Sum{Sum: writerRecs}},
		{Name: mQueued, Unit: "{record}", Description: "Fine records waiting in the program's trace writer.", Data: &metricspb.Metric_Gauge{Gauge: queued}},
		{Name: mSampling, Unit: "1", Description: "Share of fine-mode traces recorded: configured, and in force (lower while the overhead budget limits it).", Data: &metricspb.Metric_Gauge{Gauge: sampling}},
	}
	attrs := make([]*commonpb.KeyValue, 0, len(res))
	for _, a := range res {
		if a.isInt {
			attrs = append(attrs, intAttr(a.key, a.i))
		} else {
			attrs = append(attrs, strAttr(a.key, a.s))
		}
	}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: attrs},
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:     &commonpb.InstrumentationScope{Name: ScopeName, Version: version},
			Metrics:   metrics,
			SchemaUrl: SchemaURL,
		}},
		SchemaUrl: SchemaURL,
	}}}
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func intAttr(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func intPoint(attrs []*commonpb.KeyValue, start, now uint64, v int64) *metricspb.NumberDataPoint {
	return &metricspb.NumberDataPoint{Attributes: attrs, StartTimeUnixNano: start, TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: v}}
}

func doublePoint(attrs []*commonpb.KeyValue, start, now uint64, v float64) *metricspb.NumberDataPoint {
	return &metricspb.NumberDataPoint{Attributes: attrs, StartTimeUnixNano: start, TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: v}}
}
