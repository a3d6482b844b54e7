package loadgen

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Options configures a load run. The zero value of every field except BaseURL and the
// stop condition (Duration or Requests) means its documented default.
type Options struct {
	// BaseURL is the root of the PetClinic API, e.g. "http://127.0.0.1:8080". Its host
	// must be "localhost" or a loopback IP address. A path is kept as a prefix.
	BaseURL string

	// Duration stops the run after this long (0: no time limit).
	Duration time.Duration
	// Requests stops the run after this many requests (0: no limit). At least one of
	// Duration and Requests must be set.
	Requests int64

	// MinUsers and MaxUsers bound the number of active users (defaults 5 and 20). The
	// run starts with MinUsers.
	MinUsers, MaxUsers int
	// UserStep is the most users added or removed in one Interval (default 10, at
	// most MaxUsers-MinUsers). Each change is between 1 and UserStep users.
	UserStep int
	// Interval is the time between two changes of the number of users and between two
	// Progress calls (default 1s).
	Interval time.Duration

	// ThinkTime is the mean pause of a user between two requests (default 100ms; a
	// negative value means no pause).
	ThinkTime time.Duration
	// Timeout bounds each request, body included (default 10s).
	Timeout time.Duration

	// Seed seeds every random choice (see the package documentation).
	Seed uint64

	// Patterns are the navigation patterns new users choose from (default
	// DefaultPatterns()). They are validated before the run starts.
	Patterns []Pattern

	// Trace, if set, is called before each request of the users with the
	// request and its endpoint (the statistics' key, "GET /api/owners/{id}"),
	// and may add headers to it, such as a W3C traceparent; done, if not nil,
	// is called once the answer is read, with its status (0: no answer).
	// Calls come from the users' goroutines, concurrently.
	Trace func(req *http.Request, endpoint string) (done func(status int))

	// Progress, if set, is called about once per Interval with the statistics so
	// far. Calls come from one goroutine, one at a time; a slow callback delays the
	// changes of the number of users. The Stats value is the callback's to keep.
	Progress func(Stats)
}

// Defaults of Options.
const (
	DefaultMinUsers  = 5
	DefaultMaxUsers  = 20
	DefaultUserStep  = 10
	DefaultInterval  = time.Second
	DefaultThinkTime = 100 * time.Millisecond
	DefaultTimeout   = 10 * time.Second
)

// ErrNotLoopback is wrapped by the error of a run whose target is not a loopback
// address.
var ErrNotLoopback = errors.New("not a loopback address")

// withDefaults fills in the defaults and checks the options.
func (o Options) withDefaults() (Options, *url.URL, error) {
	base, err := checkBaseURL(o.BaseURL)
	if err != nil {
		return o, nil, err
	}
	if o.Duration < 0 || o.Requests < 0 {
		return o, nil, errors.New("loadgen: Duration and Requests must not be negative")
	}
	if o.Duration == 0 && o.Requests == 0 {
		return o, nil, errors.New("loadgen: no stop condition (set Duration or Requests)")
	}
	if o.MinUsers == 0 {
		o.MinUsers = DefaultMinUsers
	}
	if o.MaxUsers == 0 {
		o.MaxUsers = max(DefaultMaxUsers, o.MinUsers)
	}
	if o.MinUsers < 1 || o.MaxUsers < o.MinUsers {
		return o, nil, fmt.Errorf("loadgen: want 1 <= MinUsers <= MaxUsers, have MinUsers %d, MaxUsers %d", o.MinUsers, o.MaxUsers)
	}
	if o.UserStep < 0 {
		return o, nil, fmt.Errorf("loadgen: UserStep %d is negative", o.UserStep)
	}
	if o.UserStep == 0 {
		o.UserStep = DefaultUserStep
	}
	o.UserStep = min(o.UserStep, o.MaxUsers-o.MinUsers)
	if o.Interval < 0 || o.Timeout < 0 {
		return o, nil, errors.New("loadgen: Interval and Timeout must not be negative")
	}
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.ThinkTime == 0:
		o.ThinkTime = DefaultThinkTime
	case o.ThinkTime < 0:
		o.ThinkTime = 0
	}
	if o.Patterns == nil {
		o.Patterns = DefaultPatterns()
	}
	o.Patterns = clonePatterns(o.Patterns)
	if err := validatePatterns(o.Patterns); err != nil {
		return o, nil, err
	}
	return o, base, nil
}

// checkBaseURL parses raw and accepts it only if it is an http(s) URL whose host is
// "localhost" or a loopback IP address.
func checkBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("loadgen: base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("loadgen: base URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("loadgen: base URL %q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("loadgen: base URL %q: must not have a query or fragment", raw)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("loadgen: base URL %q: host %q: %w", raw, u.Hostname(), ErrNotLoopback)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// isLoopbackHost reports whether host (without port or brackets) is "localhost" or a
// loopback IP address. Other names are not resolved: they are refused.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
