package main

// tigris export: the flags of export.Run.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/export"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func newExportCmd() *cobra.Command {
	var (
		o                   export.Options
		headers, attrs      []string
		compression, maxMem string
		quiet               bool
		progressEvery       time.Duration
	)
	cmd := &cobra.Command{
		Use:   "export [flags] [TRACES...]",
		Short: "Ship trace files and statistics to an OpenTelemetry Collector (OTLP/HTTP)",
		Long: `export runs beside a monitored program and sends its data to an OTLP
endpoint (an OpenTelemetry Collector, or any OTLP/HTTP receiver):

  - the fine records of its trace files (TRACES: files, directories of *.tgr
    files or globs; default tigris-out) as spans, one per call, with parents
    rebuilt from the records (docs/export.md has the mapping). It follows the
    files while they grow and rotate, and keeps its place in a checkpoint file,
    so a restart neither loses nor repeats spans;
  - with --admin, the coarse statistics of the program's admin endpoint as
    metrics, every --metrics-interval.

Batches are retried with back-off while the endpoint is away; reading waits
while --max-memory is held (the trace files keep the data). It runs until
interrupted (SIGINT, SIGTERM: it finishes the requests in flight and writes
the checkpoint), or with --once until the files are sent.

The standard variables OTEL_EXPORTER_OTLP_ENDPOINT, _TRACES_ENDPOINT,
_METRICS_ENDPOINT, _HEADERS, _COMPRESSION, OTEL_SERVICE_NAME and
OTEL_RESOURCE_ATTRIBUTES are read for what the flags leave unset.`,
		Example: `  tigris export --endpoint http://127.0.0.1:4318 --admin 127.0.0.1:7070 tigris-out
  tigris export --once --endpoint http://collector:4318 app-4242.tgr
  OTEL_SERVICE_NAME=shop tigris export --header x-tenant=a tigris-out/*.tgr`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && o.Admin == "" {
				args = []string{"tigris-out"}
			}
			o.Traces = args
			var err error
			if o.Headers, err = keyValues(headers, "--header"); err != nil {
				return err
			}
			if o.Attributes, err = keyValues(attrs, "--resource"); err != nil {
				return err
			}
			if err := o.FromEnv(os.Getenv); err != nil {
				return err
			}
			// The flag, when given, wins over OTEL_EXPORTER_OTLP_COMPRESSION.
			switch compression {
			case "gzip":
				o.Gzip = true
			case "none":
				o.Gzip = false
			case "":
			default:
				return fmt.Errorf("--compression %q: want gzip or none", compression)
			}
			if !cmd.Flags().Changed("admin-token") {
				o.AdminToken = os.Getenv("TIGRIS_ADMIN_TOKEN")
			}
			if o.Endpoint == "" {
				o.Endpoint = "http://127.0.0.1:4318"
			}
			if o.MaxMemory, err = settings.ParseSize(maxMem); err != nil {
				return fmt.Errorf("--max-memory: %w", err)
			}
			switch o.Checkpoint {
			case "none":
				o.Checkpoint = ""
			case "":
				if len(o.Traces) > 0 {
					o.Checkpoint = defaultCheckpoint(o.Traces[0])
				}
			}
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(export.MemoryLimit(o.MaxMemory))
			}
			stderr := cmd.ErrOrStderr()
			o.Logf = func(format string, args ...any) { fmt.Fprintf(stderr, "tigris: "+format+"\n", args...) }
			if !quiet {
				o.OnStats = exportProgress(stderr, progressEvery)
			}
			o.Version = version()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := export.Run(ctx, o)
			printExportStats(cmd.OutOrStdout(), st, o.Checkpoint)
			if err != nil {
				return err
			}
			if st.SpansFailed > 0 {
				return fmt.Errorf("export: %d spans were not delivered", st.SpansFailed)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Endpoint, "endpoint", "", "OTLP/HTTP base URL; spans go to URL/v1/traces, metrics to URL/v1/metrics (default $OTEL_EXPORTER_OTLP_ENDPOINT, else http://127.0.0.1:4318)")
	f.StringVar(&o.TracesURL, "traces-endpoint", "", "full URL for spans, instead of --endpoint/v1/traces")
	f.StringVar(&o.MetricsURL, "metrics-endpoint", "", "full URL for metrics, instead of --endpoint/v1/metrics")
	f.StringArrayVar(&headers, "header", nil, "header KEY=VALUE added to every request (repeatable)")
	f.StringVar(&compression, "compression", "", "request compression: none or gzip (default $OTEL_EXPORTER_OTLP_COMPRESSION, else none)")
	f.StringVar(&o.Admin, "admin", "", "admin endpoint of the program (host:port); its statistics become metrics")
	// Not defaulted from the environment here: --help would print it.
	f.StringVar(&o.AdminToken, "admin-token", "", "bearer token of the admin endpoint (default $TIGRIS_ADMIN_TOKEN)")
	f.DurationVar(&o.MetricsEvery, "metrics-interval", 10*time.Second, "how often the admin endpoint is polled")
	f.StringVar(&o.ServiceName, "service-name", "", "service.name (default $OTEL_SERVICE_NAME, else the binary's name)")
	f.StringVar(&o.InstanceID, "instance-id", "", "service.instance.id (default a UUID of host and process id)")
	f.StringArrayVar(&attrs, "resource", nil, "resource attribute KEY=VALUE (repeatable; also $OTEL_RESOURCE_ATTRIBUTES)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint file (default tigris-export.checkpoint beside the traces; none: keep no checkpoint)")
	f.BoolVar(&o.Once, "once", false, "send what the files hold and exit instead of following them")
	f.IntVar(&o.BatchSpans, "batch", 8192, "most spans in one request")
	f.IntVar(&o.Workers, "workers", 2, "requests in flight at once")
	f.DurationVar(&o.RetryFor, "retry-for", 0, "give a batch up (counted as not delivered) after retrying this long; 0: retry until stopped")
	f.StringVar(&maxMem, "max-memory", "64MiB", "bound on what the shipper holds; reading waits while it is reached")
	f.DurationVar(&o.Hold, "hold", 5*time.Second, "send the records of a trace whose root has not returned in parts after this long")
	f.BoolVar(&quiet, "quiet", false, "no progress lines")
	f.DurationVar(&progressEvery, "progress", 10*time.Second, "interval of the progress lines")
	return cmd
}

// defaultCheckpoint is the checkpoint's place for the first traces argument:
// inside it for a directory, beside it for a file or glob.
func defaultCheckpoint(traces string) string {
	if fi, err := os.Stat(traces); err == nil && fi.IsDir() {
		return filepath.Join(traces, "tigris-export.checkpoint")
	}
	return filepath.Join(filepath.Dir(traces), "tigris-export.checkpoint")
}

func keyValues(list []string, flag string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range list {
		parsed, err := export.ParseKeyValues(kv)
		if err != nil || len(parsed) != 1 {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", flag, kv)
		}
		for k, v := range parsed {
			m[k] = v
		}
	}
	return m, nil
}

// exportProgress prints a line every interval while spans move: what this
// run read and sent so far.
func exportProgress(w io.Writer, every time.Duration) func(export.Stats) {
	var last time.Time
	var lastSent int64 = -1
	return func(s export.Stats) {
		if time.Since(last) < every || s.SpansSent == lastSent && s.SpansPending == 0 {
			return
		}
		last, lastSent = time.Now(), s.SpansSent
		r := s.ThisRun()
		fmt.Fprintf(w, "tigris: export: %d records read, %d spans sent, %d pending, %d not delivered, %d records held; %d metric polls sent\n",
			r.Records, r.SpansSent, r.SpansPending, r.SpansFailed, r.RecordsHeld, r.MetricsSent)
	}
}

// printExportStats prints what this run did. What earlier runs on the
// checkpoint did is said once, as skipped, and the run's records are
// balanced against its spans: read (plus what the checkpoint carried in) =
// sent + not delivered + pending + held.
func printExportStats(w io.Writer, all export.Stats, checkpoint string) {
	s := all.ThisRun()
	kept := "in the checkpoint"
	if checkpoint == "" {
		kept = "lost: no checkpoint"
	}
	fmt.Fprintf(w, "export: %d streams, %d records read, %d spans sent in %d requests, %d not delivered, %d pending (%s)\n",
		s.Streams, s.Records, s.SpansSent, s.Requests, s.SpansFailed, s.SpansPending, kept)
	var carried int64
	if e := s.Earlier; e != nil && e.Records+e.SpansSent+e.SpansFailed > 0 {
		fmt.Fprintf(w, "export: skipped what earlier runs did (checkpoint %s): %d records read, %d spans sent, %d not delivered\n",
			checkpoint, e.Records, e.SpansSent, e.SpansFailed)
	}
	if e := s.Earlier; e != nil {
		carried = e.SpansPending + e.RecordsHeld
	}
	if s.Records != s.SpansSent || carried > 0 || s.RecordsHeld > 0 {
		in := fmt.Sprintf("%d records read", s.Records)
		if carried > 0 {
			in += fmt.Sprintf(" + %d carried in by the checkpoint (%d spans pending, %d records held)", carried, s.Earlier.SpansPending, s.Earlier.RecordsHeld)
		}
		fmt.Fprintf(w, "export: %s = %d spans sent + %d not delivered + %d pending + %d records held (%s: calls of traces not ended, their root still running or their records settling)\n",
			in, s.SpansSent, s.SpansFailed, s.SpansPending, s.RecordsHeld, kept)
	}
	fmt.Fprintf(w, "export: %d retries, %d traces sent in parts, %d late records, %d records lost by the program's writer, %d damaged stretches skipped\n",
		s.Retries, s.TracesSplit, s.LateRecords, s.WriterLost, s.Gaps)
	if s.Links > 0 {
		fmt.Fprintf(w, "export: %d links of goroutines to the calls that started them: %d dropped, %d with no call to point at\n", s.Links, s.LinksDropped, s.LinksUnresolved)
	}
	if s.LateRemotes > 0 {
		fmt.Fprintf(w, "export: %d remote parents came after spans of their trace were sent; those spans carry tigris's trace id, not the request's\n", s.LateRemotes)
	}
	if s.MetricPolls+s.PollErrors > 0 {
		fmt.Fprintf(w, "export: metrics: %d polls, %d sent, %d not delivered, %d failed polls\n", s.MetricPolls, s.MetricsSent, s.MetricsFailed, s.PollErrors)
	}
}
