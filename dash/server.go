package dash

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/traceconv"
)

// Server serves the page of one Source. It is an http.Handler with the
// protections a page that switches probes needs (see the package doc's
// Security section); serve it on the listener it was made for.
type Server struct {
	src   Source
	o     Options
	csrf  string          // the form token of this server's pages
	hosts map[string]bool // the Host headers accepted; nil: any
	h     http.Handler

	mu      sync.Mutex
	flash   *Flash
	flashAt time.Time
}

// Options configure NewServer.
type Options struct {
	// Query runs the query box's queries; nil hides the box.
	Query QueryRunner
	// Log, when set, receives one line for every change made from the page.
	Log func(line string)
}

// NewServer returns the server of src for the listener address addr. When
// addr is a loopback address only requests naming it (or localhost) in their
// Host header are served, so a web page of another site cannot reach it
// through a DNS name rebound to 127.0.0.1.
func NewServer(src Source, addr net.Addr, o Options) *Server {
	s := &Server{src: src, o: o, csrf: newToken()}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		port := strconv.Itoa(tcp.Port)
		s.hosts = map[string]bool{
			addr.String(): true, "localhost:" + port: true,
			"127.0.0.1:" + port: true, "[::1]:" + port: true,
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /assets/{name}", s.asset)
	mux.HandleFunc("GET /download", s.download)
	mux.HandleFunc("POST /action", s.action)
	mux.HandleFunc("POST /query", s.query)
	// Requests that change something from another origin are refused by the
	// browser's own headers (Sec-Fetch-Site, Origin), whatever the form
	// token; GET requests change nothing.
	s.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crossOrigin(r) {
			http.Error(w, "cross-origin request refused: changes are accepted only from the dashboard's own page", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
	return s
}

// crossOrigin reports whether a browser says that r, a request that may
// change something, comes from another origin: Sec-Fetch-Site, which every
// current browser sends, or without it an Origin whose host is not the
// request's. A request with neither is not a browser's and passes (the form
// token still guards it). This is net/http's CrossOriginProtection without
// trusted origins, which the module's go line (1.23) does not reach.
func crossOrigin(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "":
	case "same-origin", "none":
		return false
	default:
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	return err != nil || u.Host != r.Host
}

// newToken is 128 random bits in hex.
func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// ServeHTTP checks the Host, sets the headers every reply carries and
// dispatches.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.hosts != nil && !s.hosts[strings.ToLower(r.Host)] {
		http.Error(w, "unknown host "+strconv.Quote(r.Host)+": tigris dash answers only to the address it listens on", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	s.h.ServeHTTP(w, r)
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r.URL.Query())
	v := s.src.View(r.Context(), q)
	v.Q = q
	v.Query = s.o.Query != nil
	for _, c := range []*Controls{&v.Functions.Controls, &v.Modes.Controls, &v.Analyzer.Controls} {
		c.CSRF = s.csrf
	}
	s.mu.Lock()
	if s.flash != nil && time.Since(s.flashAt) < time.Minute && r.Header.Get("X-Tigris-Dash") == "" {
		v.Flash, s.flash = s.flash, nil
	}
	s.mu.Unlock()
	var b bytes.Buffer
	if err := page().ExecuteTemplate(&b, "page", v); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(layoutSpace().ReplaceAll(b.Bytes(), []byte("><")))
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	data, err := fs.ReadFile(assets, "assets/"+name)
	if err != nil || name == "page.html" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(data)
}

// download converts the page's window, or one call tree, with traceconv.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	f, err := traceconv.FormatByName(r.URL.Query().Get("format"))
	if err != nil || f.Dir {
		http.Error(w, "format: want chrome or pprof (or openxtrace)", http.StatusBadRequest)
		return
	}
	var trace uint64
	if t := r.URL.Query().Get("trace"); t != "" {
		if trace, err = strconv.ParseUint(t, 10, 64); err != nil {
			http.Error(w, "trace: not a trace id", http.StatusBadRequest)
			return
		}
	}
	rd, name, err := s.src.Window(r.Context(), trace)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer rd.Close()
	ct := "application/octet-stream"
	if strings.HasSuffix(f.Ext, ".json") {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + f.Ext}))
	if _, err := f.Convert(w, rd, traceconv.Options{}); err != nil && s.o.Log != nil {
		s.o.Log(fmt.Sprintf("download %s: %v", name+f.Ext, err))
	}
}

// layoutSpace is the template's indentation between two tags: line breaks
// and the spaces after them, which would otherwise become thousands of text
// nodes. A space on one line between tags is kept; it may separate words.
var layoutSpace = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`>\s*\n\s*<`) })

// maxForm bounds the body of a form post.
const maxForm = 64 << 10

// checkForm parses a form post and checks its token: the second line of
// defence after the cross-origin check, for browsers that send neither
// Sec-Fetch-Site nor Origin.
func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "reading the form: "+err.Error(), http.StatusBadRequest)
		return false
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		http.Error(w, "the form's token is missing or stale: reload the dashboard and try again", http.StatusForbidden)
		return false
	}
	return true
}

// action makes one change and sends the browser back to the page, where
// the result is shown (post, redirect, get: reloading the page does not
// repeat the change).
func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	if !s.checkForm(w, r) {
		return
	}
	f := r.PostForm
	a := Action{Kind: f.Get("kind"), Pattern: f.Get("pattern"), Mode: f.Get("mode"), Rate: f.Get("rate"), Enabled: f.Get("enabled")}
	a.Index, _ = strconv.Atoi(f.Get("index"))
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	res := s.src.Act(ctx, a)
	if s.o.Log != nil {
		s.o.Log(res.Text)
	}
	s.mu.Lock()
	s.flash, s.flashAt = &res, time.Now()
	s.mu.Unlock()
	section := map[string]string{"mode": "functions", "run": "analyzer", "analysis": "analyzer"}[a.Kind]
	if section == "" {
		section = "modes"
	}
	http.Redirect(w, r, "/#"+section, http.StatusSeeOther)
}

// query streams a query's results, one line each, as they come.
func (s *Server) query(w http.ResponseWriter, r *http.Request) {
	if s.o.Query == nil {
		http.Error(w, "no query engine in this tigris", http.StatusNotFound)
		return
	}
	if !s.checkForm(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	err := s.o.Query.RunQuery(r.Context(), r.PostForm.Get("q"), func(line []byte) error {
		if _, err := w.Write(append(bytes.TrimRight(line, "\n"), '\n')); err != nil {
			return err
		}
		return rc.Flush()
	})
	if err != nil {
		fmt.Fprintf(w, "error: %v\n", err)
	}
}
