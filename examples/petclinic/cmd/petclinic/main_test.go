package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain runs main instead of the tests when the test binary is re-executed by
// TestSignalShutsDownGracefully.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("PETCLINIC_MAIN_ARGS"); ok {
		os.Args = append([]string{"petclinic"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSignalShutsDownGracefully(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "PETCLINIC_MAIN_ARGS=-addr 127.0.0.1:0 -db temp")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("reading the address: %v; stderr:\n%s", err, stderr.String())
			}
			url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
			if !ok {
				t.Fatalf("first line %q, want 'listening on URL'", line)
			}
			resp, err := http.Get(url + "/api/vets")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("petclinic exited with %v after %v; stderr:\n%s", err, sig, stderr.String())
				}
			case <-time.After(15 * time.Second):
				t.Fatalf("petclinic still running 15s after %v", sig)
			}
			if !strings.Contains(stderr.String(), "petclinic stopped") {
				t.Errorf("stderr does not report the shutdown:\n%s", stderr.String())
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PETCLINIC_MAIN_ARGS=-addr 127.0.0.1:0 surplus")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want status 2; output:\n%s", err, out)
	}
}
