package export

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/integration/internal/itest"
)

func TestMain(m *testing.M) {
	code := itest.Main(m)
	if petclinicDir != "" {
		os.RemoveAll(petclinicDir)
	}
	os.Exit(code)
}

// freeAddr returns a loopback address nobody listens on (for a moment).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string, p *proc) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if p.exited() {
			t.Fatalf("%s exited before listening on %s:\n%s", p.name, addr, p.output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not listen on %s after 60s:\n%s", p.name, addr, p.output())
		}
	}
}

// proc is a process a test runs in the background: its output is kept (the
// last 1 MiB) and it is killed when the test ends.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error

	mu  sync.Mutex
	out []byte
	// lines receives each output line while watch is set.
	watch func(line string)
}

func start(t *testing.T, name string, cmd *exec.Cmd, watch func(string)) *proc {
	t.Helper()
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), watch: watch}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out = append(p.out, line+"\n"...)
			if len(p.out) > 1<<20 {
				p.out = p.out[len(p.out)-1<<20:]
			}
			w := p.watch
			p.mu.Unlock()
			if w != nil {
				w(line)
			}
		}
	}()
	go func() { p.err = cmd.Wait(); pw.Close(); close(p.done) }()
	t.Cleanup(func() {
		if !p.exited() {
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s output (end):\n%s", name, tail(p.output(), 8000))
		}
	})
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return string(p.out)
}

// stop sends SIGTERM and waits (killing after a minute).
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop within a minute of SIGTERM", p.name)
	}
}

// peakRSS is the process's peak resident set (VmHWM) in bytes; 0 if unknown.
func (p *proc) peakRSS() int64 {
	b, err := os.ReadFile(filepath.Join("/proc", itoa(p.cmd.Process.Pid), "status"))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	var kb int64
	for _, c := range m[1] {
		kb = 10*kb + int64(c-'0')
	}
	return kb << 10
}

func itoa(n int) string {
	var b []byte
	for n >= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(append([]byte{byte('0' + n)}, b...))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// petclinic is the example service built with tigris, once per test binary.
var (
	petclinicOnce sync.Once
	petclinicDir  string // removed by TestMain
	petclinicBin  string
	petclinicOut  string
)

func buildPetclinic(t *testing.T) string {
	t.Helper()
	itest.RequireGo(t)
	petclinicOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tigris-export-itest-")
		if err != nil {
			petclinicOut = err.Error()
			return
		}
		petclinicDir = dir
		bin := filepath.Join(dir, "petclinic"+itest.ExeSuffix())
		out, code := itest.Run(t, filepath.Join(itest.RepoRoot, "examples", "petclinic"), nil, itest.TigrisBin, "go", "build", "-o", bin, "./cmd/petclinic")
		if code != 0 {
			petclinicOut = out
			return
		}
		petclinicBin = bin
	})
	if petclinicBin == "" {
		t.Fatalf("building examples/petclinic with tigris:\n%s", petclinicOut)
	}
	return petclinicBin
}

// service is the running example.
type service struct {
	*proc
	url, admin string
}

var (
	listeningRE = regexp.MustCompile(`listening on (http://\S+)`)
	adminRE     = regexp.MustCompile(`tigris: admin endpoint on http://([^/\s]+)/`)
)

// startPetclinic starts the example with the given TIGRIS_* settings and
// waits for its API and admin addresses.
func startPetclinic(t *testing.T, dir string, env ...string) *service {
	t.Helper()
	bin := buildPetclinic(t)
	urls := make(chan [2]string, 4)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Dir = dir
	cmd.Env = itest.Env(append([]string{"TIGRIS_ADMIN=127.0.0.1:0"}, env...)...)
	p := start(t, "petclinic", cmd, func(line string) {
		if m := listeningRE.FindStringSubmatch(line); m != nil {
			urls <- [2]string{"api", m[1]}
		}
		if m := adminRE.FindStringSubmatch(line); m != nil {
			urls <- [2]string{"admin", m[1]}
		}
	})
	s := &service{proc: p}
	timeout := time.After(60 * time.Second)
	for s.url == "" || s.admin == "" {
		select {
		case u := <-urls:
			if u[0] == "api" {
				s.url = u[1]
			} else {
				s.admin = u[1]
			}
		case <-p.done:
			t.Fatalf("petclinic exited at start:\n%s", p.output())
		case <-timeout:
			t.Fatalf("petclinic did not print its addresses within 60s:\n%s", p.output())
		}
	}
	return s
}

// ctx is a context for a test, cancelled when it ends.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return c
}

// skipUnreachable skips the test when out says a registry could not be
// reached (no network): the tool cannot be installed here.
func skipUnreachable(t *testing.T, what, out string) {
	t.Helper()
	for _, sign := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "GOPROXY=off", "Temporary failure resolving", "Could not resolve", "Unable to locate package"} {
		if strings.Contains(out, sign) {
			t.Skipf("%s cannot be installed here (%s):\n%s", what, sign, tail(out, 2000))
		}
	}
}
