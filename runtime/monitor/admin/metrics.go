package admin

import (
	"bytes"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// metricsContentType is the Prometheus text exposition format, version 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// metrics writes the coarse statistics in the Prometheus text format,
// following Prometheus's naming conventions (base units in the name,
// _total for counters, a summary for count and sum, enums as state sets),
// so that a Prometheus scrapes it as it is. Per-probe series carry the
// labels function and signature (unique within a binary). Probes that are off
// and were never called are left out, so a binary with thousands of idle probes
// does not flood the scraper; ?pointcut= and ?mode= narrow the set further.
func (a *api) metrics(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	rows := slices.DeleteFunc(f.stats(), func(s monitor.Stats) bool { return s.Count == 0 && s.Mode == settings.Off })

	var b bytes.Buffer
	labels := make([]string, len(rows))
	for i := range rows {
		labels[i] = probeLabels(rows[i].Signature)
	}
	perProbe := func(name, typ, help string, value func(*monitor.Stats) float64) {
		header(&b, name, typ, help)
		for i := range rows {
			sample(&b, name, labels[i], value(&rows[i]))
		}
	}
	perProbe("tigris_probe_calls_total", "counter", "Calls of the function measured since the program started (coarse or fine mode).",
		func(s *monitor.Stats) float64 { return float64(s.Count) })
	perProbe("tigris_probe_errors_total", "counter", "Measured calls that returned a non-nil error.",
		func(s *monitor.Stats) float64 { return float64(s.Errors) })
	perProbe("tigris_probe_panics_total", "counter", "Measured calls that panicked.",
		func(s *monitor.Stats) float64 { return float64(s.Panics) })
	// The duration as a summary without quantiles (count and sum): the
	// monitor keeps no distribution, and this is the type whose _sum/_count
	// ratio Prometheus users and dashboards take for a mean.
	header(&b, "tigris_probe_duration_seconds", "summary", "Duration of the measured calls: rate(_sum) / rate(_count) is the recent mean.")
	for i := range rows {
		sample(&b, "tigris_probe_duration_seconds_sum", labels[i], float64(rows[i].Count)*rows[i].MeanNs/1e9)
		sample(&b, "tigris_probe_duration_seconds_count", labels[i], float64(rows[i].Count))
	}
	perProbe("tigris_probe_duration_mean_seconds", "gauge", "Mean duration of the measured calls since the program started.",
		func(s *monitor.Stats) float64 { return s.MeanNs / 1e9 })
	perProbe("tigris_probe_duration_stddev_seconds", "gauge", "Standard deviation of the duration of the measured calls.",
		func(s *monitor.Stats) float64 { return s.StdDevNs / 1e9 })
	perProbe("tigris_probe_concurrency", "gauge", "Mean number of goroutines inside the function (arrival rate × mean duration).",
		func(s *monitor.Stats) float64 { return s.Concurrency })
	perProbe("tigris_probe_timed_one_in", "gauge", "1 when the probe times every call; N when phase 1 times one call in N to stay within monitor.coarse-budget (counts are then estimates).",
		func(s *monitor.Stats) float64 { return float64(s.TimedOneIn) })
	perProbe("tigris_probe_shed", "gauge", "1 when phase 1 switched the probe off: even an untimed call cost more than monitor.coarse-budget of its function's time.",
		func(s *monitor.Stats) float64 {
			if s.Shed {
				return 1
			}
			return 0
		})
	// The mode as a state set (one series per mode, 1 for the current one),
	// as Prometheus's conventions want an enum: no number to decode.
	header(&b, "tigris_probe_mode", "gauge", "Probe mode: 1 for the mode the probe is in, 0 for the others.")
	for i := range rows {
		for _, m := range []settings.Mode{settings.Off, settings.Coarse, settings.Fine} {
			v := 0.0
			if rows[i].Mode == m {
				v = 1
			}
			sample(&b, "tigris_probe_mode", labels[i]+`,mode="`+string(m)+`"`, v)
		}
	}

	global := func(name, typ, help string, v float64) {
		header(&b, name, typ, help)
		b.WriteString(name)
		b.WriteByte(' ')
		b.WriteString(formatValue(v))
		b.WriteByte('\n')
	}
	sampling := monitor.CurrentSampling()
	global("tigris_sampling_ratio", "gauge", "Configured share of fine-mode traces recorded: the ceiling of tigris_sampling_effective_ratio.", sampling.Configured)
	global("tigris_sampling_effective_ratio", "gauge", "Share of fine-mode traces recorded now: tigris_sampling_ratio, lowered while the overhead budget (tigris_overhead_budget_ratio) limits it.", sampling.Effective)
	global("tigris_overhead_budget_ratio", "gauge", "Share of CPU time fine tracing may take (analysis.budget); 0 when there is no budget.", analyzer.Analysis().Budget)
	ws := writerState()
	global("tigris_writer_queued_records", "gauge", "Records accepted by the writer and not yet written or dropped.", float64(ws.Queued))
	global("tigris_writer_written_records_total", "counter", "Records written to trace files.", float64(ws.Written))
	global("tigris_writer_dropped_records_total", "counter", "Records lost (queue full, write errors, writes after close).", float64(ws.Dropped))
	global("tigris_writer_bytes_total", "counter", "Bytes written to trace files, framing included.", float64(ws.Bytes))
	global("tigris_writer_errors_total", "counter", "Failed create, write, rotate and close calls of the writer.", float64(ws.Errors))

	w.Header().Set("Content-Type", metricsContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
	return nil
}

// probeLabels are the labels of a probe's series: function, the name Go
// gives the function (runtime.Func.Name, pprof, tracebacks; OpenTelemetry's
// code.function.name), for dashboards, and signature, unique within a binary,
// for telling apart what the name alone might not. Label values must be
// valid UTF-8, or Prometheus rejects the whole scrape.
func probeLabels(signature string) string {
	sig := strings.ToValidUTF8(signature, "\uFFFD")
	return `function="` + escapeLabel(FunctionName(sig)) + `",signature="` + escapeLabel(sig) + `"`
}

// FunctionName is the name Go gives a function, for a probe signature as the
// monitor writes it: the signature up to its parameter list,
// "example.com/shop.(*Store).Find" for "example.com/shop.(*Store).Find(int)
// (string, error)", "example.com/shop.Max[...]" for a generic function.
func FunctionName(signature string) string {
	s := strings.TrimPrefix(signature, "func ")
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if depth == 0 && i > 0 && s[i-1] != '.' {
				return s[:i]
			}
			depth++
		case '[':
			depth++
		case ')', ']':
			depth--
		}
	}
	return s
}

func header(b *bytes.Buffer, name, typ, help string) {
	b.WriteString("# HELP ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(escapeHelp(help))
	b.WriteString("\n# TYPE ")
	b.WriteString(name)
	b.WriteByte(' ')
	b.WriteString(typ)
	b.WriteByte('\n')
}

func sample(b *bytes.Buffer, name, labels string, v float64) {
	b.WriteString(name)
	b.WriteByte('{')
	b.WriteString(labels)
	b.WriteString(`} `)
	b.WriteString(formatValue(v))
	b.WriteByte('\n')
}

// escapeLabel escapes a label value: backslash, double quote and line feed are
// the three characters the text format requires escaped.
var escapeLabel = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace

// escapeHelp escapes a HELP text: backslash and line feed.
var escapeHelp = strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace

// formatValue writes a sample value as the text format wants it: Go float
// syntax, with +Inf, -Inf and NaN spelled that way.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
