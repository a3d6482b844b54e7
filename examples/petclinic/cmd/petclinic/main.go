// Command petclinic serves the PetClinic JSON API over an embedded SQLite database
// seeded with deterministic sample data. It is the example workload of tigris: build it
// with `tigris go build` and drive it with cmd/petclinic-load.
//
// Usage:
//
//	petclinic [-addr 127.0.0.1:8080] [-db :memory:|temp|PATH] [-seed 1] [-trace-context]
//
// With -trace-context, requests that carry a W3C traceparent header join the
// caller's trace: built with tigris, their recorded traces have the caller's
// trace id, and tigris export sends their method spans under the caller's span.
//
// Once it accepts connections it prints "listening on http://HOST:PORT" to standard
// output (useful with -addr 127.0.0.1:0). SIGINT or SIGTERM shut it down gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/tigrisgo/tigris/examples/petclinic/internal/app"
)

func main() {
	var cfg app.Config
	flag.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "listen `address` (port 0 picks a free port)")
	flag.StringVar(&cfg.DB, "db", ":memory:", "database: :memory:, temp (a temporary file) or a file `path`")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "RNG `seed` of the sample data")
	flag.BoolVar(&cfg.TraceContext, "trace-context", false, "join the callers' traces of requests with a W3C traceparent header")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "petclinic: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}

	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg.Stdout = os.Stdout

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "petclinic:", err)
		os.Exit(1)
	}
}
