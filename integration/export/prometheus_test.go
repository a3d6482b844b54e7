package export

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
	"github.com/tigrisgo/tigris/integration/internal/itest"
)

var (
	promOnce sync.Once
	promErr  string
)

// prometheus returns the prometheus and promtool binaries, installing
// Debian's package with apt-get when they are missing (as root).
func prometheus(t *testing.T) (server, promtool string) {
	t.Helper()
	promOnce.Do(func() {
		if _, err := exec.LookPath("prometheus"); err == nil {
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil || os.Getuid() != 0 {
			promErr = "prometheus is not installed, and apt-get is missing or the test does not run as root (install the distribution's prometheus package)"
			return
		}
		install := func(args ...string) (string, error) {
			cmd := exec.Command("apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		start := time.Now()
		out, err := install("install", "-y", "--no-install-recommends", "prometheus")
		if err != nil {
			// The package lists may be missing or stale on a new machine.
			if uout, uerr := install("update"); uerr != nil {
				out += uout
			} else {
				out, err = install("install", "-y", "--no-install-recommends", "prometheus")
			}
		}
		if err != nil {
			promErr = fmt.Sprintf("apt-get install prometheus: %v\n%s", err, tail(out, 2000))
			return
		}
		t.Logf("installed prometheus with apt-get in %s", time.Since(start).Round(time.Second))
	})
	if promErr != "" {
		skipUnreachable(t, "Prometheus", promErr)
		t.Skip(promErr)
	}
	server, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	promtool, err = exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool: %v", err)
	}
	return server, promtool
}

// TestPrometheusInstall installs Prometheus (or finds it installed). CI runs
// it first, with TestCollectorBuild.
func TestPrometheusInstall(t *testing.T) {
	server, promtool := prometheus(t)
	for _, bin := range []string{server, promtool} {
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			t.Errorf("%s --version: %v\n%s", bin, err, out)
		}
	}
}

// TestPrometheus: Prometheus from the distribution's packages scrapes the
// example service's /metrics as it is (no relabelling), finds nothing to
// complain about, and answers queries with the admin endpoint's counts.
func TestPrometheus(t *testing.T) {
	server, promtool := prometheus(t)
	itest.RequireGo(t)
	dir := t.TempDir()
	svc := startPetclinic(t, dir, "TIGRIS_MODE=coarse", "TIGRIS_ANALYSIS=off")
	if _, err := loadgen.Run(ctx(t), loadgen.Options{BaseURL: svc.url, Duration: 3 * time.Second, Seed: 7}); err != nil {
		t.Fatal(err)
	}

	// promtool's linter: naming, units, HELP, TYPE.
	resp, err := http.Get("http://" + svc.admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lint := exec.Command(promtool, "check", "metrics")
	lint.Stdin = strings.NewReader(string(body))
	if out, err := lint.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	addr := freeAddr(t)
	cfg := filepath.Join(dir, "prometheus.yml")
	itest.WriteFile(t, cfg, fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: petclinic\n    static_configs: [{targets: [%q]}]\n", svc.admin))
	cmd := exec.Command(server, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	p := start(t, "prometheus", cmd, nil)
	waitListening(t, addr, p)
	defer p.stop(t)

	// The target is up, with no scrape error.
	var targets struct {
		Data struct {
			ActiveTargets []struct {
				Health    string `json:"health"`
				LastError string `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	waitFor(t, "the target to be up", func() bool {
		if err := getJSON("http://"+addr+"/api/v1/targets", &targets); err != nil {
			return false
		}
		at := targets.Data.ActiveTargets
		return len(at) == 1 && at[0].Health == "up" && at[0].LastError == ""
	})

	// The calls Prometheus scraped after the load are the admin endpoint's.
	c, err := adminclient.New(svc.admin, adminclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stats, err := c.Stats(ctx(t), adminclient.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var calls uint64
	for _, s := range stats.Stats {
		calls += s.Count
	}
	var got float64
	waitFor(t, "the scraped calls to match the admin endpoint's", func() bool {
		v, err := query(addr, `sum(tigris_probe_calls_total{job="petclinic"})`)
		got = v
		return err == nil && uint64(v) == calls
	})
	// The summary's count agrees, and every probe is in exactly one mode.
	if v, err := query(addr, `sum(tigris_probe_duration_seconds_count)`); err != nil || uint64(v) != calls {
		t.Errorf("sum of tigris_probe_duration_seconds_count = %v (%v), want %d", v, err, calls)
	}
	// (Coarse, or off where phase 1 shed a probe of a function of a few ns.)
	if v, err := query(addr, `count(tigris_probe_mode == 1)`); err != nil || int(v) != len(stats.Stats) {
		t.Errorf("probes in one mode = %v (%v), want %d", v, err, len(stats.Stats))
	}
	if v, err := query(addr, `count(tigris_probe_mode{mode="fine"} == 1) or vector(0)`); err != nil || v != 0 {
		t.Errorf("probes in fine mode = %v (%v), want none", v, err)
	}
	// Series keep their labels as exposed, plus job and instance: nothing
	// was renamed (exported_*) to make room.
	var series struct {
		Data []map[string]string `json:"data"`
	}
	if err := getJSON("http://"+addr+"/api/v1/series?match[]="+url.QueryEscape(`tigris_probe_calls_total`), &series); err != nil || len(series.Data) == 0 {
		t.Fatalf("series: %v", err)
	}
	for _, s := range series.Data {
		for k := range s {
			switch k {
			case "__name__", "job", "instance", "function", "signature":
			default:
				t.Errorf("series %v has label %s", s, k)
			}
		}
		if !strings.Contains(s["signature"], s["function"]+"(") {
			t.Errorf("series %v: function is not the signature's name", s)
		}
	}
	t.Logf("Prometheus scraped %d series of tigris_probe_calls_total, %v calls in all", len(series.Data), got)
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// query returns the value of an instant query with one result.
func query(addr, q string) (float64, error) {
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := getJSON("http://"+addr+"/api/v1/query?query="+url.QueryEscape(q), &r); err != nil {
		return 0, err
	}
	if len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("%s: %d results", q, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// waitFor polls cond for up to 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
