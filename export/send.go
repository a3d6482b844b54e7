package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Sending follows the OTLP/HTTP specification: POST of a binary protobuf
// request to /v1/traces or /v1/metrics; 2xx is success, possibly partial
// (the reply says how many items the receiver rejected); 429, 502, 503 and
// 504 and failures to connect are retried with exponential back-off (and the
// server's Retry-After); any other status is final. A final failure counts
// the batch's items as not delivered. 413 (too large) splits a trace batch in
// two instead.

// outcome is how one request ended.
type outcome int

const (
	sent     outcome = iota // accepted (rejected holds what the reply refused)
	failed                  // final failure: not delivered
	tooLarge                // 413: send it in smaller parts
	stopped                 // the shipper stops; not sent, kept in the checkpoint
)

// poster sends request bodies with retries.
type poster struct {
	client      *http.Client
	headers     map[string]string
	gzip        bool
	retryFor    time.Duration // give up after this long; 0: never
	backoffMin  time.Duration
	backoffMax  time.Duration
	logf        func(format string, args ...any)
	onRetry     func()
	gzipScratch bytes.Buffer
	zw          *gzip.Writer
	// bodyHeld: a transport kept a request body past the timeout; the
	// caller must not reuse the pieces of that request.
	bodyHeld bool
}

func newHTTPClient(timeout time.Duration, conns int, rt http.RoundTripper) *http.Client {
	if rt != nil {
		return &http.Client{Transport: rt, Timeout: timeout}
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		// Our bodies are protobuf, gzip'd or not on our side; never let the
		// transport add or strip an encoding.
		DisableCompression: true,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// post sends body (pieces concatenated) to url until it is accepted, fails
// for good, or stop is closed between attempts. For a trace request,
// rejected is the reply's partial_success.rejected_spans.
func (p *poster) post(stop <-chan struct{}, url string, pieces [][]byte, isTrace bool) (o outcome, rejected int64, err error) {
	body, encoding := p.encode(pieces)
	p.bodyHeld = false // the caller has seen it
	start := time.Now()
	wait := p.backoffMin
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			p.onRetry()
		}
		status, after, reply, err := p.once(url, body, encoding)
		switch {
		case err == nil && status/100 == 2:
			if isTrace {
				rejected, err = tracesRejected(reply)
			}
			return sent, rejected, err
		case err == nil && status == http.StatusRequestEntityTooLarge:
			return tooLarge, 0, nil
		case err == nil && !retryable(status):
			return failed, 0, fmt.Errorf("%s: %s: %s", url, http.StatusText(status), excerpt(reply))
		}
		if err == nil {
			err = fmt.Errorf("%s: %s", url, http.StatusText(status))
		}
		if p.retryFor > 0 && time.Since(start) >= p.retryFor {
			return failed, 0, fmt.Errorf("gave up after %s: %w", p.retryFor, err)
		}
		if attempt == 0 {
			p.logf("export: %v; retrying with back-off", err)
		}
		d := wait
		if after > d {
			d = min(after, time.Minute)
		}
		// ±25 % jitter, so shippers restarted together do not retry in step.
		d = time.Duration(float64(d) * (0.75 + 0.5*rand.Float64()))
		select {
		case <-stop:
			return stopped, 0, nil
		case <-time.After(d):
		}
		wait = min(2*wait, p.backoffMax)
	}
}

// encode returns the body: the pieces as they are (sent without copying
// them into one buffer, which cost a sixth of the shipper's time), or
// compressed if so configured.
func (p *poster) encode(pieces [][]byte) ([][]byte, string) {
	if !p.gzip {
		return pieces, ""
	}
	if p.bodyHeld {
		p.gzipScratch = bytes.Buffer{} // the old one may still be read
		p.bodyHeld = false
	}
	p.gzipScratch.Reset()
	if p.zw == nil {
		p.zw, _ = gzip.NewWriterLevel(&p.gzipScratch, gzip.BestSpeed)
	} else {
		p.zw.Reset(&p.gzipScratch)
	}
	for _, b := range pieces {
		p.zw.Write(b)
	}
	p.zw.Close()
	return [][]byte{p.gzipScratch.Bytes()}, "gzip"
}

// piecesBody reads pieces one after the other and says when the transport
// has closed it: only then may the caller reuse the pieces (a transport may
// still read a body after RoundTrip returned).
type piecesBody struct {
	pieces [][]byte
	closed chan struct{}
	once   sync.Once
}

func newPiecesBody(pieces [][]byte) *piecesBody {
	return &piecesBody{pieces: pieces, closed: make(chan struct{})}
}

func (b *piecesBody) Read(p []byte) (int, error) {
	for len(b.pieces) > 0 && len(b.pieces[0]) == 0 {
		b.pieces = b.pieces[1:]
	}
	if len(b.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.pieces[0])
	b.pieces[0] = b.pieces[0][n:]
	return n, nil
}

func (b *piecesBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// once makes one attempt. A transport error is returned as err; any reply as
// its status, its Retry-After and (the first 64 KiB of) its body.
func (p *poster) once(url string, pieces [][]byte, encoding string) (status int, after time.Duration, reply []byte, err error) {
	n := 0
	for _, b := range pieces {
		n += len(b)
	}
	body := newPiecesBody(slices.Clone(pieces))
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, body)
	if err != nil {
		return 0, 0, nil, err
	}
	req.ContentLength = int64(n)
	defer func() {
		select {
		case <-body.closed:
		case <-time.After(p.client.Timeout):
			// A transport that does not close the body: reusing the
			// pieces now could corrupt what it still sends; the worker
			// lets go of them instead.
			p.bodyHeld = true
		}
	}()
	req.Header.Set("Content-Type", "application/x-protobuf")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	reply, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // reuse the connection
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")), reply, nil
}

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// tracesRejected reads partial_success.rejected_spans from a trace reply.
func tracesRejected(reply []byte) (int64, error) {
	rejected, msg, ok := partialSuccess(reply)
	if !ok {
		return 0, nil // a reply that is not protobuf (a proxy's text): accepted
	}
	if rejected > 0 || msg != "" {
		return rejected, errors.New("partial success: " + msg)
	}
	return 0, nil
}

// partialSuccess reads an OTLP export response (ExportTraceServiceResponse
// and its metrics and logs twins): partial_success (field 1), and in it the
// count of rejected items (1) and error_message (2). The response is read
// with protowire, as the requests are written: the generated response types
// live in the protocol module's collector packages, which import gRPC. ok is
// false when reply is not protobuf. In one pass, without allocating but the
// message.
func partialSuccess(reply []byte) (rejected int64, msg string, ok bool) {
	ok = eachField(reply, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != 1 || typ != protowire.BytesType {
			return true
		}
		// A message field seen twice is merged: the later values win.
		return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) bool {
			switch {
			case num == 1 && typ == protowire.VarintType:
				n, _ := protowire.ConsumeVarint(v)
				rejected = int64(n)
			case num == 2 && typ == protowire.BytesType:
				msg = string(v)
			}
			return true
		})
	})
	return rejected, msg, ok
}

// eachField calls f with each field of the protobuf message b: its number,
// its wire type and its encoded value (a length-delimited value without its
// length). It reports false when b is malformed or f returns false.
func eachField(b []byte, f func(protowire.Number, protowire.Type, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false
		}
		v := b[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		if !f(num, typ, v) {
			return false
		}
		b = b[m:]
	}
	return true
}

// excerpt is the start of a reply body for a message.
func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty reply)"
	}
	return s
}
