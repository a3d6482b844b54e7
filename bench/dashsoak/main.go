package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	duration := flag.Duration("duration", time.Hour, "how long the dashboard runs")
	every := flag.Duration("every", time.Minute, "how often memory is read")
	fetch := flag.Duration("fetch", 5*time.Second, "how often the page is fetched")
	flag.Parse()
	log.SetFlags(0)
	root, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tigris-dashsoak-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	tigris := filepath.Join(tmp, "tigris")
	run(root, "go", "build", "-o", tigris, "./cmd/tigris")
	example := filepath.Join(root, "examples", "petclinic")
	service := filepath.Join(tmp, "petclinic")
	run(example, tigris, "go", "build", "-o", service, "./cmd/petclinic")
	load := filepath.Join(tmp, "petclinic-load")
	run(example, "go", "build", "-o", load, "./cmd/petclinic-load")

	svcAddr, adminAddr, dashAddr := freeAddr(), freeAddr(), freeAddr()
	svc := start(ctx, tmp, []string{"TIGRIS_ADMIN=" + adminAddr, "TIGRIS_OUT=" + filepath.Join(tmp, "out", "{binary}-{pid}.tgr")},
		service, "-addr", svcAddr)
	waitHTTP("http://" + svcAddr + "/")
	start(ctx, tmp, nil, load, "-url", "http://"+svcAddr, "-duration", (*duration + time.Minute).String(), "-min", "2", "-max", "6", "-think", "200ms", "-q")
	dash := start(ctx, tmp, nil, tigris, "dash", "--listen", dashAddr, adminAddr)
	page := "http://" + dashAddr + "/"
	waitHTTP(page)

	fmt.Println("| minute | dash RSS | service RSS | page | page fetches (errors) |")
	fmt.Println("|---|---|---|---|---|")
	begin := time.Now()
	var fetches, errs, size int
	tick, sample := time.NewTicker(*fetch), time.NewTicker(*every)
	defer tick.Stop()
	defer sample.Stop()
	report := func() {
		fmt.Printf("| %.1f | %s | %s | %d kB | %d (%d) |\n", time.Since(begin).Minutes(),
			rss(dash.Process.Pid), rss(svc.Process.Pid), size/1000, fetches, errs)
	}
	report()
	for time.Since(begin) < *duration {
		select {
		case <-tick.C:
			fetches++
			n, err := get(page)
			if err != nil {
				errs++
				log.Printf("page: %v", err)
				continue
			}
			size = n
		case <-sample.C:
			report()
		}
	}
	report()
}

// rss is a process's resident set size from /proc.
func rss(pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return fmt.Sprintf("%.1f MB", float64(kb)/1000)
		}
	}
	return "?"
}

func get(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s", resp.Status)
	}
	return int(n), err
}

// waitHTTP waits until url answers at all (any status).
func waitHTTP(url string) {
	for i := 0; i < 100; i++ {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	log.Fatalf("%s does not answer", url)
}

// start runs a process until ctx ends; its output goes to a log in dir.
func start(ctx context.Context, dir string, env []string, name string, args ...string) *exec.Cmd {
	out, err := os.Create(filepath.Join(dir, filepath.Base(name)+".log"))
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	return cmd
}

func run(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// freeAddr is a loopback address with a port free right now.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
