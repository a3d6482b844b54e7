package probecost

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/bench/evaluation"
	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
)

// TestProbeCostPetclinic is TestProbeCost on requests of the example
// service, built plain and with the evaluation's dependency scope (the
// service's module, the SQL driver, database/sql and net/http's router), run
// under callgrind while loadgen drives it with one of the evaluation's users
// (no think time; one, so that every build serves the same requests in the
// same order): a warm-up of petclinicWarm requests, then the counters are
// zeroed (callgrind_control -z) and petclinicRequests are counted. The
// operation is one of loadgen's requests (a user's action, one or more HTTP
// requests), as in the evaluation's CPU per request. It
// takes some ten minutes of one CPU; TIGRIS_PROBECOST=1 as for
// TestProbeCost, whose other variables it reads too.
func TestProbeCostPetclinic(t *testing.T) {
	valgrind, work, root, tigris := setup(t)
	control, err := exec.LookPath("callgrind_control")
	if err != nil {
		t.Fatal("TestProbeCostPetclinic needs callgrind_control (valgrind's)")
	}
	pc := filepath.Join(root, "examples", "petclinic")
	plain, inst := filepath.Join(work, "petclinic.plain"), filepath.Join(work, "petclinic.deps")
	run(t, pc, "go", "build", "-o", plain, "./cmd/petclinic")
	var deps evaluation.Scope
	for _, s := range evaluation.Scopes() {
		if s.Name == evaluation.ScopeDeps {
			deps = s
		}
	}
	cfg := "version: 1\nmonitor:\n  include:\n"
	measured := []string{"main."}
	for _, in := range deps.Include {
		cfg += fmt.Sprintf("    - %q\n", in)
		if p := scopePrefix(in); p != "" {
			measured = append(measured, p)
		}
	}
	cfg += "  std: true\n  mode: coarse\nwriter:\n  mode: null\n"
	cfgPath := filepath.Join(work, "deps.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o666); err != nil {
		t.Fatal(err)
	}
	run(t, pc, tigris, "--config", cfgPath, "go", "build", "-o", inst, "./cmd/petclinic")
	w := workload{name: "petclinic", plain: plain, inst: inst, ops: petclinicRequests, measured: measured}
	var report bytes.Buffer
	w.measure(t, &report, func(r Run) (*Profile, error) { return serve(t, valgrind, control, r, work) })
	output(t, report.Bytes(), "petclinic")
}

// scopePrefix is the prefix of the names of the functions a pointcut of
// the dependency scope selects: within(modernc.org/sqlite) selects
// modernc.org/sqlite.*, execution(* net/http.(*ServeMux).*(..))
// net/http.(*ServeMux).*, execution(* example.com/m/...*(..)) every
// package below example.com/m; "" for any other form.
func scopePrefix(pointcut string) string {
	if p, ok := strings.CutPrefix(pointcut, "within("); ok {
		return strings.TrimSuffix(p, ")") + "."
	}
	p, ok := strings.CutPrefix(pointcut, "execution(* ")
	if !ok {
		return ""
	}
	if p, ok = strings.CutSuffix(p, "*(..))"); !ok {
		return ""
	}
	if p, ok := strings.CutSuffix(p, "/..."); ok {
		return p + "/"
	}
	return p
}

const (
	petclinicWarm     = 400
	petclinicRequests = 1000
)

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// serve runs r, a petclinic build, under callgrind, drives it with loadgen
// and returns the dump of the requests after the warm-up.
func serve(t *testing.T, valgrind, control string, r Run, work string) (*Profile, error) {
	base := filepath.Join(work, fileName(r.Name)+".callgrind")
	cmd := exec.Command(valgrind, "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes",
		"--callgrind-out-file="+base, r.Bin, "-addr", "127.0.0.1:0")
	cmd.Dir = work
	cmd.Env = append(append(os.Environ(), "GODEBUG=asyncpreemptoff=1"), r.Env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(3 * time.Minute):
		return nil, fmt.Errorf("%s: no listening line in 3 minutes\n%s", r.Name, tail(stderr.String(), 2000))
	}
	drive := func(n int64) error {
		_, err := loadgen.Run(context.Background(), loadgen.Options{BaseURL: url, Requests: n, MinUsers: 1, MaxUsers: 1,
			ThinkTime: -1, Timeout: time.Minute, Seed: 1})
		return err
	}
	if err := drive(petclinicWarm); err != nil {
		return nil, fmt.Errorf("%s: warm-up: %w", r.Name, err)
	}
	pid := fmt.Sprint(cmd.Process.Pid)
	if out, err := exec.Command(control, "-z", pid).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("callgrind_control -z: %v\n%s", err, out)
	}
	if err := drive(petclinicRequests); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	if out, err := exec.Command(control, "-d", pid).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("callgrind_control -d: %v\n%s", err, out)
	}
	last := LastDump(base)
	if last == base {
		return nil, fmt.Errorf("%s: callgrind_control -d wrote no dump beside %s", r.Name, base)
	}
	return ReadProfileFile(last)
}
