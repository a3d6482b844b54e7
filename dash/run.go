package dash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Config is what tigris dash's flags set.
type Config struct {
	// Target is a trace file, or the admin address of a running program
	// (host:port or URL).
	Target string
	// Listen is where the page is served; DefaultListen when "".
	Listen string
	// Token is the program's admin token. It stays in this process: the
	// page never sees it.
	Token string
	// Open launches a browser on the page.
	Open bool
	// Refresh is how often a live program is read and the page refreshed.
	Refresh time.Duration
	// ReadOnly disables every change from the page.
	ReadOnly bool
	// Analysis is the filter evaluated over a trace file.
	Analysis settings.Analysis
	// Query, when set, runs the query box's queries.
	Query QueryRunner
	// Stdout gets the page's address; Stderr progress and warnings.
	Stdout, Stderr io.Writer
}

// DefaultListen serves on loopback, on a port the system picks.
const DefaultListen = "127.0.0.1:0"

// Run serves the page of cfg.Target until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	src, what, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer src.Close()
	listen := cfg.Listen
	if listen == "" {
		listen = DefaultListen
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("dash: %w", err)
	}
	defer ln.Close()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(cfg.Stderr, "tigris dash: warning: serving on %s, which is not loopback: whoever reaches it sees the program and can switch its probes (start with --read-only to prevent that)\n", ln.Addr())
	}
	srv := NewServer(src, ln.Addr(), Options{Query: cfg.Query, Log: func(line string) { fmt.Fprintf(cfg.Stderr, "tigris dash: %s\n", line) }})
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	url := "http://" + hostPort(ln.Addr()) + "/"
	fmt.Fprintf(cfg.Stdout, "tigris dash: %s (%s; Ctrl-C to stop)\n", url, what)
	if cfg.Open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(cfg.Stderr, "tigris dash: %v; open %s yourself\n", err, url)
		}
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	return nil
}

// open makes the Source of the target, and says what it is in a few words.
func open(ctx context.Context, cfg Config) (Source, string, error) {
	if fi, err := os.Stat(cfg.Target); err == nil && !fi.IsDir() {
		began := time.Now()
		f, err := OpenFile(cfg.Target, FileOptions{Analysis: cfg.Analysis, Progress: func(n int64, el time.Duration) {
			fmt.Fprintf(cfg.Stderr, "tigris dash: %dM records read (%.1fM records/s)\n", n/1e6, float64(n)/1e6/el.Seconds())
		}})
		if err != nil {
			return nil, "", fmt.Errorf("dash: %w", err)
		}
		return f, fmt.Sprintf("trace %s: %s records summarized in %s", cfg.Target, count(uint64(f.Records())), human.Ns(float64(time.Since(began)))), nil
	}
	if strings.HasSuffix(cfg.Target, ".tgr") {
		return nil, "", fmt.Errorf("dash: %s: no such trace file", cfg.Target)
	}
	c, err := adminclient.New(cfg.Target, adminclient.Options{Token: cfg.Token})
	if err != nil {
		return nil, "", fmt.Errorf("dash: %s is neither a trace file nor an admin address: %w", cfg.Target, err)
	}
	l := NewLive(c, cfg.Target, LiveOptions{Refresh: cfg.Refresh, ReadOnly: cfg.ReadOnly, TokenGiven: cfg.Token != ""})
	l.Read(ctx)
	if err := l.readErr(); err != nil {
		return nil, "", fmt.Errorf("dash: %w", err)
	}
	go l.Run(ctx)
	return l, "program at " + cfg.Target, nil
}

// hostPort is addr for a URL: an unspecified address is reached on loopback.
func hostPort(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	if tcp.IP.IsUnspecified() {
		return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
	}
	return addr.String()
}

// openBrowser asks the desktop to open url, where there is one.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display to open a browser on")
		}
		for _, name := range []string{"xdg-open", "x-www-browser", "sensible-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				cmd = exec.Command(p, url)
				break
			}
		}
		if cmd == nil {
			return errors.New("no browser launcher found (xdg-open)")
		}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("opening a browser: %w", err)
	}
	go cmd.Wait()
	return nil
}
