package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Run drives the PetClinic API at opts.BaseURL until the stop condition of opts is met
// and returns the statistics of the run.
//
// Before any user starts, Run validates opts (a non-loopback BaseURL is refused with
// an error wrapping [ErrNotLoopback]) and checks that GET /api/health answers 200;
// that request is not counted. Run returns ctx's error, with the statistics so far,
// when ctx ends before the stop condition; requests it abandons then are not counted.
// All goroutines Run starts have ended when it returns.
func Run(ctx context.Context, opts Options) (Stats, error) {
	o, base, err := opts.withDefaults()
	if err != nil {
		return Stats{}, err
	}
	r := &run{
		opts:    o,
		baseURL: base.String(),
		client:  newClient(o),
		rec:     newRecorder(),
		reqCtx:  ctx,
		done:    make(chan struct{}),
		full:    make(chan struct{}),
		rng:     rand.New(rand.NewPCG(o.Seed, 0)),
		started: map[string]int64{},
	}
	defer r.client.CloseIdleConnections()
	if err := r.preflight(ctx); err != nil {
		return Stats{}, err
	}
	return r.loop(ctx)
}

// run is the state of one Run. Fields marked "controller" are used only by the
// goroutine running loop.
type run struct {
	opts    Options
	baseURL string
	client  *http.Client
	rec     *recorder
	reqCtx  context.Context // requests end with the caller's context only
	done    chan struct{}   // closed when the users must stop
	full    chan struct{}   // closed when the last request of the budget is reserved

	fullOnce sync.Once
	reserved atomic.Int64 // requests reserved against opts.Requests
	maxOwner atomic.Int64 // highest owner id seen in an answer
	wg       sync.WaitGroup

	rng          *rand.Rand       // controller
	users        []*user          // controller
	nextUser     int              // controller
	minU, maxU   int              // controller: fewest and most users seen
	started      map[string]int64 // controller: users started per pattern
	start        time.Time        // controller
	lastCount    int64            // controller: requests at lastTick
	lastTick     time.Time        // controller
	currentSpeed float64          // controller: requests/s during the last Interval
}

// user is one simulated user. Only its own goroutine touches rng, timer and session.
type user struct {
	id      int
	pattern *Pattern
	rng     *rand.Rand
	stop    chan struct{} // closed by the controller to remove the user
	exited  chan struct{} // closed by the user's goroutine when it returns
	timer   *time.Timer
	session session
}

func newClient(o Options) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy: nil, // never send the load through a proxy
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialLoopback(ctx, dialer, network, addr)
		},
		MaxIdleConns:          2 * (o.MaxUsers + 1),
		MaxIdleConnsPerHost:   o.MaxUsers + 1,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
	}
	return &http.Client{
		Transport: transport,
		// A redirect answer is returned as it is: it counts as an error.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialLoopback connects to addr only through a loopback address.
func dialLoopback(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if !isLoopbackHost(host) {
		return nil, fmt.Errorf("loadgen: dialing %s: %w", addr, ErrNotLoopback)
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		if !ip.IsLoopback() {
			continue
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("loadgen: dialing %s: %q resolves to no loopback address: %w", addr, host, ErrNotLoopback)
	}
	return nil, errors.Join(errs...)
}

func (r *run) preflight(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.baseURL+"/api/health", nil)
	if err != nil {
		return fmt.Errorf("loadgen: %w", err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("loadgen: target %s not reachable: %w", r.baseURL, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("loadgen: target %s: GET /api/health answered %s", r.baseURL, resp.Status)
	}
	return nil
}

// loop is the controller: it starts the users, changes their number every Interval,
// reports progress and stops everything at the end.
func (r *run) loop(ctx context.Context) (Stats, error) {
	r.start = time.Now()
	r.lastTick = r.start
	r.minU, r.maxU = r.opts.MinUsers, r.opts.MinUsers
	r.setUsers(r.opts.MinUsers)

	ticker := time.NewTicker(r.opts.Interval)
	defer ticker.Stop()
	var deadline <-chan time.Time
	if r.opts.Duration > 0 {
		t := time.NewTimer(r.opts.Duration)
		defer t.Stop()
		deadline = t.C
	}
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		case <-deadline:
			break loop
		case <-r.full:
			break loop
		case now := <-ticker.C:
			n := r.rec.count()
			if dt := now.Sub(r.lastTick); dt > 0 {
				r.currentSpeed = float64(n-r.lastCount) / dt.Seconds()
			}
			r.lastCount, r.lastTick = n, now
			r.setUsers(walk(r.rng, len(r.users), r.opts.MinUsers, r.opts.MaxUsers, r.opts.UserStep))
			if r.opts.Progress != nil {
				r.opts.Progress(r.stats(len(r.users)))
			}
		}
	}
	close(r.done)
	r.wg.Wait()
	r.users = nil
	return r.stats(0), err
}

// walk returns the next number of users: cur plus or minus 1..step, kept within
// [lo, hi].
func walk(rng *rand.Rand, cur, lo, hi, step int) int {
	if step <= 0 {
		return min(max(cur, lo), hi)
	}
	d := 1 + rng.IntN(step)
	if rng.IntN(2) == 0 {
		d = -d
	}
	return min(max(cur+d, lo), hi)
}

// setUsers starts or removes users until n are active. Removed users are chosen at
// random; setUsers waits until they have finished their current request.
func (r *run) setUsers(n int) {
	for len(r.users) < n {
		r.startUser()
	}
	if k := len(r.users) - n; k > 0 {
		victims := r.rng.Perm(len(r.users))[:k]
		for _, i := range victims {
			close(r.users[i].stop)
		}
		gone := make(map[*user]bool, k)
		for _, i := range victims {
			<-r.users[i].exited
			gone[r.users[i]] = true
		}
		kept := r.users[:0]
		for _, u := range r.users {
			if !gone[u] {
				kept = append(kept, u)
			}
		}
		clear(r.users[len(kept):])
		r.users = kept
	}
	r.minU = min(r.minU, len(r.users))
	r.maxU = max(r.maxU, len(r.users))
}

func (r *run) startUser() {
	r.nextUser++
	u := &user{
		id:      r.nextUser,
		pattern: pickPattern(r.opts.Patterns, r.rng),
		rng:     rand.New(rand.NewPCG(r.opts.Seed, uint64(r.nextUser))),
		stop:    make(chan struct{}),
		exited:  make(chan struct{}),
	}
	r.started[u.pattern.Name]++
	r.users = append(r.users, u)
	r.wg.Add(1)
	go r.runUser(u)
}

func (r *run) runUser(u *user) {
	defer r.wg.Done()
	defer close(u.exited)
	a := u.pattern.Start
	for {
		select {
		case <-u.stop:
			return
		case <-r.done:
			return
		default:
		}
		if !r.reserve() {
			return
		}
		r.perform(u, a)
		a = u.pattern.next(a, u.rng)
		if !r.think(u) {
			return
		}
	}
}

// reserve takes one request from the budget, reporting false when it is used up.
// Taking the last one closes r.full.
func (r *run) reserve() bool {
	if r.opts.Requests == 0 {
		return true
	}
	n := r.reserved.Add(1)
	if n == r.opts.Requests {
		r.fullOnce.Do(func() { close(r.full) })
	}
	return n <= r.opts.Requests
}

// think pauses the user, reporting false if it must stop instead.
func (r *run) think(u *user) bool {
	if r.opts.ThinkTime <= 0 {
		return true
	}
	d := time.Duration(float64(r.opts.ThinkTime) * (0.5 + u.rng.Float64()))
	if u.timer == nil {
		u.timer = time.NewTimer(d)
	} else {
		u.timer.Reset(d)
	}
	select {
	case <-u.timer.C:
		return true
	case <-u.stop:
	case <-r.done:
	}
	u.timer.Stop()
	return false
}

// stats returns the statistics so far with users active users.
func (r *run) stats(users int) Stats {
	s := r.rec.snapshot(time.Since(r.start))
	s.CurrentThroughput = r.currentSpeed
	s.Users, s.MinUsers, s.MaxUsers = users, r.minU, r.maxU
	s.UsersStarted = maps.Clone(r.started)
	return s
}

// seeOwner notes an owner id seen in an answer.
func (r *run) seeOwner(id int64) {
	for {
		cur := r.maxOwner.Load()
		if id <= cur || r.maxOwner.CompareAndSwap(cur, id) {
			return
		}
	}
}
