// Command petclinic-load drives a running petclinic server with the workload of the
// Tigris paper (see package github.com/tigrisgo/tigris/bench/evaluation/loadgen):
// 5 to 20 simulated users following three navigation patterns, the number of users
// changing every second. Only loopback targets are accepted.
//
// Usage:
//
//	petclinic-load [-url http://127.0.0.1:8080] [-requests 60000 | -duration 5m]
//	               [-min 5] [-max 20] [-think 100ms] [-timeout 10s] [-seed 1]
//	               [-patterns browse,maintenance,newclient] [-json] [-q]
//
// Progress goes to standard error once per second; the summary and a per-endpoint
// table go to standard output, or with -json the statistics as one JSON object
// (loadgen.Stats; tigris bench runs it so, in a process of its own). -patterns
// keeps only the named navigation patterns. SIGINT stops the run early and prints
// what was done.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/tigrisgo/tigris/bench/evaluation/loadgen"
)

func main() {
	var o loadgen.Options
	flag.StringVar(&o.BaseURL, "url", "http://127.0.0.1:8080", "petclinic base `URL` (loopback only)")
	flag.Int64Var(&o.Requests, "requests", 0, "stop after `n` requests (default 60000 unless -duration is set)")
	flag.DurationVar(&o.Duration, "duration", 0, "stop after this long")
	flag.IntVar(&o.MinUsers, "min", loadgen.DefaultMinUsers, "fewest active users")
	flag.IntVar(&o.MaxUsers, "max", loadgen.DefaultMaxUsers, "most active users")
	flag.DurationVar(&o.ThinkTime, "think", loadgen.DefaultThinkTime, "mean think time between a user's requests (negative: none)")
	flag.DurationVar(&o.Timeout, "timeout", loadgen.DefaultTimeout, "timeout of one request")
	flag.Uint64Var(&o.Seed, "seed", 1, "RNG `seed`")
	quiet := flag.Bool("q", false, "no progress lines")
	asJSON := flag.Bool("json", false, "print the statistics as JSON instead of the table")
	patterns := flag.String("patterns", "", "comma-separated `names` of the navigation patterns users follow (default all)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "petclinic-load: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if o.Requests == 0 && o.Duration == 0 {
		o.Requests = 60_000
	}
	if *patterns != "" {
		names := strings.Split(*patterns, ",")
		for _, p := range loadgen.DefaultPatterns() {
			if slices.Contains(names, p.Name) {
				o.Patterns = append(o.Patterns, p)
			}
		}
		if len(o.Patterns) != len(names) {
			fmt.Fprintf(os.Stderr, "petclinic-load: -patterns %q: want names of browse, maintenance, newclient\n", *patterns)
			os.Exit(2)
		}
	}
	if !*quiet {
		o.Progress = func(s loadgen.Stats) { fmt.Fprintln(os.Stderr, s) }
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stats, err := loadgen.Run(ctx, o)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "petclinic-load:", err)
		os.Exit(1)
	}
	if *asJSON {
		if err := json.NewEncoder(os.Stdout).Encode(stats); err != nil {
			fmt.Fprintln(os.Stderr, "petclinic-load:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Println(stats)
	stats.WriteTable(os.Stdout)
}
