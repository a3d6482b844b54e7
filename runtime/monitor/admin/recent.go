package admin

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Two endpoints for clients that show more than tables (tigris dash): the
// recent fine records, and whether a client's token would be accepted.

// Recent-record limits: the reply is buffered whole (see wrap), so its size
// bounds the memory one request holds in the program.
const (
	DefaultRecentBytes = 1 << 20
	MaxRecentBytes     = 4 << 20
)

// AuthState answers POST auth.
type AuthState struct {
	// Authorized is true: a request that reaches the handler passed the token
	// check every change passes (401 otherwise).
	Authorized bool `json:"authorized"`
	// TokenRequired says whether the program has a token, so changes need one.
	TokenRequired bool `json:"tokenRequired"`
}

// recent serves GET writer/recent?bytes=N: the current trace file's anchor
// (header and probe definitions) and its last whole chunks within N bytes, as
// a trace stream (writer.Tail). The writer hands chunks to the file at least
// every flush interval, so the stream ends at most that long ago.
func (a *api) recent(w http.ResponseWriter, r *http.Request) error {
	n := int64(DefaultRecentBytes)
	if s := r.URL.Query().Get("bytes"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 1 || v > MaxRecentBytes {
			return badRequest("bytes", fmt.Errorf("%q is not a byte count from 1 to %d", s, MaxRecentBytes))
		}
		n = v
	}
	s, ok := monitor.WriterStats()
	if !ok || s.CurrentFile == "" {
		return errorf(http.StatusConflict, "no trace file yet: the writer opens when a probe first records in fine mode (POST %srules with mode fine, or let the analyzer select)", Prefix)
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Cache-Control", "no-store")
	info, err := writer.Tail(w, s.CurrentFile, n)
	if err != nil {
		return errorf(http.StatusInternalServerError, "reading the trace file: %v", err)
	}
	w.Header().Set("X-Tigris-File", s.CurrentFile)
	w.Header().Set("X-Tigris-File-Bytes", strconv.FormatInt(info.FileBytes, 10))
	w.Header().Set("X-Tigris-Omitted-Bytes", strconv.FormatInt(info.Omitted, 10))
	return nil
}

// auth serves POST auth: it changes nothing, and answers 200 only to a
// request that carries what a change needs (wrap checks the token first).
func (a *api) auth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, AuthState{Authorized: true, TokenRequired: a.hasToken})
	return nil
}
