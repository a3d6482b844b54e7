package adminclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
)

// DefaultAddr is where programs are looked for when no address is given.
const DefaultAddr = "127.0.0.1:7070"

// DefaultTimeout bounds one request when Options.Timeout is 0: an endpoint
// answers in milliseconds unless the program is stopped (SIGSTOP, a debugger)
// or the address is wrong.
const DefaultTimeout = 10 * time.Second

// maxReply bounds the reply read, far above any real one (a stats list of
// 100,000 probes is about 40 MB). A variable for tests.
var maxReply int64 = 64 << 20

// Options configure a Client. The zero value is a client without a token,
// with DefaultTimeout.
type Options struct {
	// Token is sent as a bearer token with every request. Programs with a
	// token require it for changes (POST, PUT, DELETE); reads need none.
	Token string
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration
	// Raw, when not nil, receives the body of every successful reply as the
	// program sent it, before it is decoded (`tigris ctl --json` prints it).
	// A write error fails the request.
	Raw io.Writer
}

// Client talks to one program's admin endpoint.
type Client struct {
	addr    string // as given, for messages
	base    string // scheme://host:port
	opt     Options
	timeout time.Duration
	http    *http.Client
}

// New returns a client of the endpoint at addr: host:port (a listen address
// such as ":7070" or "0.0.0.0:7070" is reached on loopback) or a URL, of which
// only the scheme and host are used. It fails only when addr is neither.
func New(addr string, o Options) (*Client, error) {
	base, err := BaseURL(addr)
	if err != nil {
		return nil, err
	}
	t := o.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return &Client{addr: addr, base: base, opt: o, timeout: t, http: &http.Client{Timeout: t}}, nil
}

// Addr is the address the client was made with.
func (c *Client) Addr() string { return c.addr }

// AddrFromEnv is the address $TIGRIS_ADMIN, the variable that makes a program
// listen, names; DefaultAddr when it is unset or off.
func AddrFromEnv() string {
	v := strings.TrimSpace(os.Getenv("TIGRIS_ADMIN"))
	switch strings.ToLower(v) {
	case "", "off", "none", "never", "0":
		return DefaultAddr
	}
	return v
}

// BaseURL turns an address as New takes it into the URL requests go to. Its
// errors start with the address, quoted, so a caller can put the name of its
// flag before them.
func BaseURL(addr string) (string, error) {
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("%q is not a URL or host:port", addr)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q: want host:port such as %s", addr, DefaultAddr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// Error is the program's refusal of a request: a reply with a status of 300 or
// more.
type Error struct {
	// Status is the HTTP status of the reply.
	Status int
	// Body is the reply; Body.Error is set even when the reply was not JSON.
	Body admin.ErrorBody
	// Expr is the expression a syntax error's line and column point into (the
	// pattern or filter sent), "" when the request had none.
	Expr string
	// Hint says what to do about it, "" when nothing specific is known.
	// Callers may set it before printing the error.
	Hint string
}

// Error is the program's message, the hint, and for a syntax error the
// expression with a caret under the column.
func (e *Error) Error() string {
	msg := e.Body.Error
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	if e.Body.Column > 0 && e.Expr != "" {
		lines := strings.Split(e.Expr, "\n")
		if l := max(e.Body.Line, 1); l <= len(lines) {
			line := lines[l-1]
			// Columns count characters; a tab keeps its width under the caret.
			pad := []rune(line)[:min(e.Body.Column-1, utf8.RuneCountInString(line))]
			for i, r := range pad {
				if r != '\t' {
					pad[i] = ' '
				}
			}
			msg += "\n    " + line + "\n    " + string(pad) + "^"
		}
	}
	return msg
}

// do sends one request and returns the body of a 2xx reply, after giving it to
// Options.Raw; out, when not nil, is filled from it as JSON. body, when not
// nil, is sent as JSON. expr is what a syntax error's column refers to.
func (c *Client) do(ctx context.Context, method, path string, body, out any, expr string) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opt.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opt.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.unreachable(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return nil, fmt.Errorf("reading the reply of %s: %w", c.addr, err)
	}
	if int64(len(data)) > maxReply {
		// Cut short, it would fail to decode with a message about JSON.
		return nil, fmt.Errorf("the reply of %s to %s %s is larger than %d bytes, more than any admin endpoint sends", c.addr, method, shownPath(path), maxReply)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode, Expr: expr}
		if json.Unmarshal(data, &e.Body) != nil || e.Body.Error == "" {
			e.Body.Error = fmt.Sprintf("%s %s: %s", method, shownPath(path), resp.Status)
		}
		if resp.StatusCode == http.StatusNotFound && !strings.Contains(path, "/rules/") {
			e.Hint = fmt.Sprintf("is %s a tigris admin endpoint of this version?", c.addr)
		}
		return nil, e
	}
	if c.opt.Raw != nil {
		if _, err := c.opt.Raw.Write(data); err != nil {
			return nil, err
		}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("decoding the reply of %s %s: %w", method, shownPath(path), err)
		}
	}
	return data, nil
}

// shownPath is a request's path for a message: without its query, which may
// hold a whole query text.
func shownPath(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[:i] + "?…"
	}
	return path
}

// unreachable explains a failed connection.
func (c *Client) unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("no tigris admin endpoint at %s: connection refused; start the program with TIGRIS_ADMIN=%s (a program built with admin.link: true in tigris.yaml)", c.addr, c.addr)
	case ue != nil && ue.Timeout():
		return fmt.Errorf("tigris admin endpoint at %s did not answer within %v (is the program stopped?)", c.addr, c.timeout)
	}
	return fmt.Errorf("tigris admin endpoint at %s: %w", c.addr, err)
}
