package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
)

// Server timeouts and limits. A client that is slow or stuck holds one
// connection for at most these times; none of it touches the host program's
// goroutines.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 16 << 10
)

// stderr is where the start-up line and server errors go (a variable for tests).
var stderr io.Writer = os.Stderr

// started is when the admin package initialised: about when the program started.
var started = time.Now()

// Launch starts the endpoint the effective settings ask for and prints where
// it listens. It is what the generated probe tables pass to the monitor as
// monitor.Links.Admin when tigris.yaml links the endpoint; the monitor calls
// it once, when it starts, on a goroutine of its own.
func Launch(a settings.Admin) error {
	s, err := Start(a)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tigris: admin endpoint on %s\n", s.URL())
	return nil
}

// Server is a running admin endpoint.
type Server struct {
	srv  *http.Server
	addr net.Addr
	done chan struct{} // closed when Serve returned
}

// Start listens on a.Listen and serves the API in the background until Close.
// It refuses an address that is not loopback unless a.Token is set, since the
// API switches what the program records. It does not print anything.
func Start(a settings.Admin) (*Server, error) {
	if a.Listen == "" {
		return nil, errors.New("no listen address")
	}
	if err := checkExposure(a.Listen, a.Token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a.Listen)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", a.Listen, err)
	}
	// A host name was not checked before listening (that would need a second
	// resolution that may disagree with the first); the address it bound to is
	// what counts. Nothing has been accepted yet.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && a.Token == "" {
		ln.Close()
		return nil, fmt.Errorf("refusing to serve on %s (%s is not a loopback address) without a token; set TIGRIS_ADMIN_TOKEN or admin.token", a.Listen, tcp.IP)
	}
	s := &Server{
		srv: &http.Server{
			Handler:           NewHandler(Options{Token: a.Token}),
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    maxHeaderBytes,
			// Not the standard logger: the program may use it for its own output.
			ErrorLog: log.New(stderr, "tigris: admin: ", 0),
		},
		addr: ln.Addr(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "tigris: admin endpoint stopped: %v\n", err)
		}
	}()
	return s, nil
}

// checkExposure refuses, before anything is bound, an address that is plainly not
// loopback (an empty host, an unspecified or other non-loopback IP) when there is
// no token. Host names are checked after listening, on the bound address.
func checkExposure(listen, token string) error {
	if token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("admin address %q: %w", listen, err)
	}
	if host == "" {
		return fmt.Errorf("refusing to serve on %s (all interfaces) without a token; use 127.0.0.1%s or set TIGRIS_ADMIN_TOKEN", listen, listen)
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
		return fmt.Errorf("refusing to serve on %s (%s is not a loopback address) without a token; set TIGRIS_ADMIN_TOKEN or admin.token", listen, host)
	}
	return nil
}

// Addr is the address the server listens on (with the real port when the
// settings asked for port 0).
func (s *Server) Addr() net.Addr { return s.addr }

// URL is the API's base URL, e.g. "http://127.0.0.1:7070/tigris/v1/".
func (s *Server) URL() string { return "http://" + s.addr.String() + Prefix }

// Close stops the server: it stops accepting, waits up to five seconds for
// requests in flight and then closes their connections.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}
