package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

func (a *api) analysis(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, analyzer.Analysis())
	return nil
}

// setAnalysis changes the fields the body gives and keeps the others, so
// {"criteria": "..."} alone changes only the filter; metrics merge into the
// current binding. The result is validated as a whole by the monitor.
func (a *api) setAnalysis(w http.ResponseWriter, r *http.Request) error {
	// Read the body before taking the lock: a slow client must not hold up
	// other clients' changes.
	var raw json.RawMessage
	if err := decodeBody(r, &raw); err != nil {
		return err
	}
	if !bytes.HasPrefix(raw, []byte("{")) {
		return errorf(http.StatusBadRequest, "request body: %.40s is not a JSON object (want e.g. {\"criteria\": \"most frequent\"})", raw)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	next := analyzer.Analysis()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&next); err != nil {
		return errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if err := analyzer.SetAnalysis(next); err != nil {
		if strings.Contains(err.Error(), "no probes registered") {
			return errorf(http.StatusConflict, "%v", err)
		}
		return badRequest(analysisField(err), err)
	}
	writeJSON(w, http.StatusOK, analyzer.Analysis())
	return nil
}

// analysisField names the settings.Analysis field (by its JSON name) an error
// from analyzer.SetAnalysis is about: validation errors carry the field, parse
// and binding errors name it in their text ("analysis.criteria: 1:7: ...").
func analysisField(err error) string {
	var es settings.Errors
	if errors.As(err, &es) && len(es) > 0 {
		return strings.TrimPrefix(es[0].Field, "analysis.")
	}
	msg := err.Error()
	for _, f := range []string{"criteria", "metrics", "interval", "window", "budget", "enabled"} {
		if strings.Contains(msg, "analysis."+f) {
			return f
		}
	}
	return "analysis"
}

// runAnalysis runs one cycle now. A cycle that fails (bad criteria from the
// environment, nothing to group) is still recorded in the history; the reply is
// 409 with its error.
func (a *api) runAnalysis(w http.ResponseWriter, r *http.Request) error {
	c, err := analyzer.AnalyzeNow()
	if err != nil {
		line, col := position(err)
		return &apiError{status: http.StatusConflict, ErrorBody: ErrorBody{
			Error: "analysis cycle failed: " + err.Error(), Line: line, Column: col}}
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (a *api) history(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, HistoryList{Cycles: orEmpty(analyzer.History())})
	return nil
}
