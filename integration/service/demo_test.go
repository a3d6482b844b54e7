package service

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/export/otlptest"
	"github.com/tigrisgo/tigris/integration/internal/itest"
	"github.com/tigrisgo/tigris/runtime/writer"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestDemo runs a short `tigris demo --export` from the repository: the
// example builds with tigris, serves load, the analyzer selects functions,
// the selected ones write fine records, which reach an OTLP receiver as
// spans, with the statistics as metrics; the trace converts, and the demo
// ends with the tigris dash command for it.
func TestDemo(t *testing.T) {
	itest.RequireGo(t)
	out := t.TempDir()
	otlp := otlptest.New(t)
	got := itest.Tigris(t, itest.RepoRoot, nil, "demo", "--duration", "8s", "--interval", "2s", "--sampling", "100%", "--budget", "0.05%", "--out", out, "--export", otlp.URL)
	for _, want := range []string{
		`== 1\. Building examples/petclinic`,
		`PetClinic on http://127\.0\.0\.1:\d+, admin endpoint on 127\.0\.0\.1:\d+`,
		`cycle 1 at .*: \d+ candidates → [1-9]\d* selected`,
		`\+ (service|repository)\.\S+ .*\((frequent|expensive|changeable): `,
		`== 4\. Phase 1: coarse statistics, top 10 of \d+ functions`,
		`trace writer: [1-9]\d* records written`,
		`convert: wrote .*petclinic\.pb\.gz \(pprof`,
		`convert: wrote .*petclinic\.chrome\.json \(chrome`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("demo output lacks %q:\n%s", want, got)
		}
	}
	// The budget controller keeps its predicted share of CPU inside the budget,
	// unless even its floor rate cannot (then it says so), and the records made
	// after each decision stay near it (twice the budget allows for the load
	// changing between windows). Whether it binds depends on what the analyzer
	// selects; TestAnalyzerUnderLoad makes it bind.
	decisions := regexp.MustCompile(`budget 0\.05% of CPU: .* predicted ([0-9.]+)%, sampling (\w+).*\n.*measured since the previous cycle: [0-9.]+[kMGTPE]? records/s → records took ([0-9.]+)% of CPU`).FindAllStringSubmatch(got, -1)
	if len(decisions) < 2 {
		t.Errorf("fewer than two cycles reported a budget decision:\n%s", got)
	}
	for i, d := range decisions {
		var predicted, measured float64
		fmt.Sscan(d[1], &predicted)
		fmt.Sscan(d[3], &measured)
		if predicted > 0.05 && d[2] != "floor" {
			t.Errorf("cycle %d: predicted share %.3f%% over the 0.05%% budget with action %s", i+1, predicted, d[2])
		}
		if i > 0 && decisions[i-1][2] != "floor" && measured > 2*0.05 {
			t.Errorf("cycle %d: records took %.3f%% of CPU after a decision for a 0.05%% budget", i+1, measured)
		}
	}
	n := itest.CountRecords(t, filepath.Join(out, "petclinic.tgr"))
	if n == 0 {
		t.Error("the demo's trace holds no records")
	}
	// --export: every record is a span of petclinic at the receiver, and the
	// statistics came as metrics.
	all := otlp.Spans()
	byService := map[string]int{}
	for _, sp := range all {
		byService[sp.Resource["service.name"]]++
	}
	if _, dups := otlp.Count(); byService["petclinic"] != n || dups != 0 || len(otlp.Metrics()) == 0 ||
		!regexp.MustCompile(fmt.Sprintf(`export: %d spans sent, 0 not delivered, 0 pending; [1-9]\d* metric requests sent to %s`, n, regexp.QuoteMeta(otlp.URL))).MatchString(got) {
		t.Errorf("--export: %v spans by service (%d twice) and %d metric requests for %d records; the demo said:\n%s", byService, dups, len(otlp.Metrics()), n, got)
	}
	checkJoinedTrace(t, got, all)
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "   go run ./cmd/tigris dash --open "+filepath.Join(out, "petclinic.tgr") {
		t.Errorf("the demo's last line is %q, want the tigris dash command for its trace", last)
	}
	for _, f := range []string{"petclinic.pb.gz", "petclinic.chrome.json"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Every record belongs to a function the analyzer selected at some point:
	// phase 2 traces only what phase 1 chose.
	selected := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+\+ (\S+)`).FindAllStringSubmatch(got, -1) {
		selected[m[1]] = true
	}
	r, err := writer.Open(filepath.Join(out, "petclinic.tgr"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if it.Kind != writer.KindProbe {
			continue
		}
		// The demo prints signatures without the module prefix; compare up to
		// the first space, as the pattern above captured them.
		name := strings.ReplaceAll(it.Probe.Signature, "github.com/tigrisgo/tigris/examples/petclinic/internal/", "")
		name, _, _ = strings.Cut(name, " ")
		ok := selected[name]
		if !ok {
			t.Errorf("records of %s, which no cycle selected (selected: %v)", it.Probe.Signature, selected)
		}
	}
}

// checkJoinedTrace: the request trace the demo shows is at the receiver with
// both kinds of spans: the simulated user's client span (petclinic-load), and
// tigris's method spans (petclinic) in that trace, each root under the client
// span.
func checkJoinedTrace(t *testing.T, got string, spans map[string]otlptest.Span) {
	t.Helper()
	m := regexp.MustCompile(`== 6\. One request's trace .*\n.*\n   trace ([0-9a-f]{32}) .*\n.*client span ([0-9a-f]{16}),`).FindStringSubmatch(got)
	if m == nil {
		t.Errorf("the demo shows no request's trace with both kinds of spans:\n%s", got)
		return
	}
	client, ok := spans[m[1]+"/"+m[2]]
	if !ok || client.Resource["service.name"] != "petclinic-load" || client.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("trace %s: the client span %s did not reach the receiver as petclinic-load's (%+v)", m[1], m[2], client)
		return
	}
	methods, roots := 0, 0
	for _, sp := range spans {
		if hex.EncodeToString(sp.TraceId) != m[1] || sp.Resource["service.name"] != "petclinic" {
			continue
		}
		methods++
		if hex.EncodeToString(sp.ParentSpanId) == m[2] {
			roots++
		}
	}
	if methods == 0 || roots == 0 {
		t.Errorf("trace %s: %d method spans of petclinic, %d of them under the client span %s", m[1], methods, roots, m[2])
	}
}
