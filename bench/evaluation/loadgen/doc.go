// Package loadgen drives the PetClinic example API (examples/petclinic) the way the
// workload of the Tigris paper does: simulated users, each following one of a few
// navigation patterns given as transition tables, with think time between requests,
// and a number of active users that changes every second, as a random walk between a
// minimum and a maximum, until a target number of requests or a duration is reached.
//
// It is the workload of the PetClinic evaluation and demo (package evaluation, its
// parent) and of the example's load command (examples/petclinic/cmd/petclinic-load),
// so it lives with the evaluation rather than as a concept of tigris of its own. It
// imports only the standard library.
//
// # Targets
//
// Only loopback targets are accepted: [Run] refuses a base URL whose host is not
// "localhost" or a loopback IP address ([ErrNotLoopback]), and its HTTP client dials
// loopback addresses only, uses no proxy and follows no redirect. Every request has a
// timeout ([Options.Timeout]).
//
// # Users
//
// A run starts MinUsers users. Every [Options.Interval] (one second by default) the
// controller adds or removes between 1 and UserStep users at random, keeping the count
// within [MinUsers, MaxUsers]; a removed user finishes its current request first, so
// at most MaxUsers requests are ever in flight. Each new user picks one of the
// [Options.Patterns] at random (by [Pattern.Weight]) and walks its transition table:
// it performs the request of its current [Action], waits a think time drawn uniformly
// from [ThinkTime/2, 3·ThinkTime/2], and moves to a next action drawn by weight.
// Users remember what they saw (the owner found, its pets, the owner they
// registered), so "owner maintenance" updates the owner it just looked at.
//
// # Stopping
//
// A run stops when [Options.Requests] requests have completed (exactly that many are
// sent), when [Options.Duration] has passed (requests in flight then still complete
// and are counted), or when ctx ends; in the last case Run returns the statistics so
// far with ctx's error.
//
// # Determinism
//
// The random choices of the controller and of each user come from generators seeded
// with [Options.Seed], so the same seed gives every user the same sequence of
// decisions; the interleaving of users, and so the exact requests, still depends on
// timing.
//
// # Example
//
//	stats, err := loadgen.Run(ctx, loadgen.Options{
//		BaseURL:  "http://127.0.0.1:8080",
//		Requests: 60_000,
//		Seed:     1,
//		Progress: func(s loadgen.Stats) { log.Println(s) },
//	})
//	if err != nil {
//		return err
//	}
//	stats.WriteTable(os.Stdout)
package loadgen
