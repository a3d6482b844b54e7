package evaluation

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The example service: finding, building, starting and stopping it.

// findPetclinic finds examples/petclinic from the current directory upwards.
func findPetclinic() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	for {
		p := filepath.Join(dir, "examples", "petclinic")
		if fileExists(filepath.Join(p, "go.mod")) {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("demo: examples/petclinic not found; run the demo from the tigris repository")
		}
		dir = parent
	}
}

// fileExists reports whether name can be stat'ed.
func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// buildEnv is the environment of the example's build: the user's, with
// go.mod/go.sum updates allowed (the example is its own module), no
// inherited -toolexec (tigris go adds its own), and outside the repository's
// development workspace (go.work): in workspace mode the go command refuses
// -mod=mod, so neither the evaluation nor the demo could build.
func buildEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "TIGRIS_")
	})
	return append(env, "GOFLAGS=-mod=mod", "GOWORK=off")
}

// runWithTicker runs cmd, showing elapsed time on stderr while it runs, and its
// output only when it fails.
func runWithTicker(cmd *exec.Cmd, stderr io.Writer, what string) error {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if isTerminal(stderr) {
				fmt.Fprint(stderr, "\r\033[K")
			}
			if err != nil {
				return fmt.Errorf("%w\n%s", err, out.String())
			}
			return nil
		case <-tick.C:
			if el := time.Since(start).Round(time.Second); isTerminal(stderr) {
				fmt.Fprintf(stderr, "\r\033[K   %s… %s", what, el)
			} else if el%(15*time.Second) == 0 {
				fmt.Fprintf(stderr, "   %s… %s\n", what, el)
			}
		}
	}
}

// service is the running example.
type service struct {
	cmd   *exec.Cmd
	url   string // the API
	admin string // host:port of the admin endpoint
	exit  chan error
	// gcs counts the garbage collections the service reported on stderr
	// (run with GODEBUG=gctrace=1; 0 otherwise).
	gcs atomic.Int64
}

var (
	listeningRE = regexp.MustCompile(`listening on (http://\S+)`)
	adminRE     = regexp.MustCompile(`tigris: admin endpoint on http://([^/\s]+)/`)
)

// startService starts bin, on CPU cpu alone unless cpu < 0 (startOn), and
// waits until it printed its API address and, withAdmin, the admin
// endpoint's (a plain build prints none). args are petclinic's flags beside
// -addr.
func startService(ctx context.Context, bin, dir string, withAdmin bool, env []string, cpu int, args ...string) (*service, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TIGRIS_") }), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := startOn(cmd, cpu); err != nil {
		return nil, fmt.Errorf("starting petclinic: %w", err)
	}
	s := &service{cmd: cmd, exit: make(chan error, 1)}
	urls := make(chan string, 2)
	var logMu sync.Mutex
	var log strings.Builder
	scan := func(r io.Reader, re *regexp.Regexp) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "gc ") && strings.Contains(line, " @") {
				s.gcs.Add(1)
				continue
			}
			if m := re.FindStringSubmatch(line); m != nil {
				urls <- re.String() + "\x00" + m[1]
			}
			logMu.Lock()
			if log.Len() < 64<<10 {
				log.WriteString(line + "\n")
			}
			logMu.Unlock()
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); scan(stdout, listeningRE) }()
	go func() { defer wg.Done(); scan(stderr, adminRE) }()
	go func() { wg.Wait(); s.exit <- cmd.Wait() }()
	timeout := time.After(30 * time.Second)
	for s.url == "" || withAdmin && s.admin == "" {
		select {
		case u := <-urls:
			re, v, _ := strings.Cut(u, "\x00")
			if re == listeningRE.String() {
				s.url = v
			} else {
				s.admin = v
			}
		case err := <-s.exit:
			logMu.Lock()
			defer logMu.Unlock()
			return nil, fmt.Errorf("petclinic exited at start (%v):\n%s", err, log.String())
		case <-timeout:
			s.kill()
			logMu.Lock()
			defer logMu.Unlock()
			return nil, fmt.Errorf("petclinic did not report its addresses within 30s:\n%s", log.String())
		case <-ctx.Done():
			s.kill()
			return nil, ctx.Err()
		}
	}
	return s, nil
}

// stop asks the service to end (SIGTERM) and waits; after grace it kills it.
func (s *service) stop(grace time.Duration) error {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("demo: stopping petclinic: %w", err)
	}
	select {
	case <-s.exit:
		return nil
	case <-time.After(grace):
		s.kill()
		return fmt.Errorf("demo: petclinic did not stop within %s after SIGTERM; killed", grace)
	}
}

func (s *service) kill() {
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Kill()
	}
}

// isTerminal reports whether w is a terminal, where progress redraws one line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
