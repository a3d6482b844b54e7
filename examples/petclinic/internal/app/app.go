// Package app wires PetClinic together — database, repositories, service, HTTP API —
// and runs the server until its context ends.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/database"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/handler"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/repository"
	"github.com/tigrisgo/tigris/examples/petclinic/internal/service"
)

// Config is what Run needs. The zero value serves an in-memory database on
// 127.0.0.1:8080.
type Config struct {
	// Addr is the listen address, host:port; port 0 picks a free port. Default
	// 127.0.0.1:8080.
	Addr string
	// DB is the database location (see package database): ":memory:" (default),
	// "temp" or a file path.
	DB string
	// Seed is the RNG seed of the sample data (0: 1).
	Seed uint64
	// Stdout receives the line "listening on http://HOST:PORT" once the server
	// accepts connections (nil: discarded).
	Stdout io.Writer
	// Logger receives start, stop and internal-error messages (nil: discarded).
	Logger *slog.Logger
	// ShutdownTimeout bounds how long Run waits for in-flight requests when ctx ends
	// (default 10s).
	ShutdownTimeout time.Duration
	// TraceContext lets the requests that carry a W3C traceparent header join
	// the caller's trace: in a build with tigris, a recorded trace whose root
	// (a service method) serves such a request has that trace id, and tigris
	// export puts its spans under the caller's span (tracecontext.go).
	TraceContext bool
}

// Run opens and seeds the database, listens on cfg.Addr and serves the API until ctx
// ends, then shuts the server down gracefully (in-flight requests finish, within
// cfg.ShutdownTimeout) and closes the database. It returns nil after a graceful
// shutdown.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:8080"
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	log := cfg.Logger

	db, err := database.Open(ctx, cfg.DB, database.SeedOptions{Seed: cfg.Seed})
	if err != nil {
		return err
	}
	defer db.Close()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	h := NewHandler(db, log)
	if cfg.TraceContext {
		joinTraceContext()
		h = withTraceContext(h)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	url := "http://" + ln.Addr().String()
	log.Info("petclinic started", "url", url, "db", db.Location)
	if _, err := fmt.Fprintf(cfg.Stdout, "listening on %s\n", url); err != nil {
		log.Warn("announcing the address", "err", err)
	}

	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("petclinic shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing the database: %w", err)
	}
	log.Info("petclinic stopped")
	return nil
}

// NewHandler returns the PetClinic API over db.
func NewHandler(db *database.DB, log *slog.Logger) http.Handler {
	return handler.New(service.NewClinicService(repository.New(db.DB)), log)
}
