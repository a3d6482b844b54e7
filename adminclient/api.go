package adminclient

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// One method per endpoint of docs/admin-api.md, in its order. Each returns the
// decoded reply, or an error and no reply.

// Filter selects probes; an empty field selects all.
type Filter struct {
	// Pointcut keeps the probes whose function it matches, e.g.
	// "execution(* shop/repo.*(..))". A syntax error in it is an *Error with
	// a caret under the column.
	Pointcut string
	// Mode keeps the probes in this mode: off, coarse or fine.
	Mode string
}

func (f Filter) query(kv ...string) string {
	return query(append(kv, "pointcut", f.Pointcut, "mode", f.Mode)...)
}

// query builds "?k=v&..." from pairs, leaving out empty values.
func query(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// call makes one request whose reply is a T.
func call[T any](ctx context.Context, c *Client, method, path string, body any, expr string) (*T, error) {
	v := new(T)
	if _, err := c.do(ctx, method, path, body, v, expr); err != nil {
		return nil, err
	}
	return v, nil
}

// Probes lists the probes f selects, with their mode and position.
func (c *Client) Probes(ctx context.Context, f Filter) (*admin.ProbeList, error) {
	return call[admin.ProbeList](ctx, c, "GET", admin.Prefix+"probes"+f.query(), nil, f.Pointcut)
}

// Rules lists the configured and the manual rules.
func (c *Client) Rules(ctx context.Context) (*admin.RuleList, error) {
	return call[admin.RuleList](ctx, c, "GET", admin.Prefix+"rules", nil, "")
}

// AddRule appends a manual rule and returns it with its index.
func (c *Client) AddRule(ctx context.Context, r settings.Rule) (*admin.RuleChange, error) {
	return call[admin.RuleChange](ctx, c, "POST", admin.Prefix+"rules", r, r.Pattern)
}

// DeleteRule removes the manual rule with this index and returns it.
func (c *Client) DeleteRule(ctx context.Context, index int) (*admin.RuleChange, error) {
	return call[admin.RuleChange](ctx, c, "DELETE", admin.Prefix+"rules/"+strconv.Itoa(index), nil, "")
}

// SetRules replaces the manual rules (none: clears them) and returns the rules
// in force.
func (c *Client) SetRules(ctx context.Context, rules []settings.Rule) (*admin.RuleList, error) {
	if rules == nil {
		rules = []settings.Rule{} // null is not a rule list
	}
	return call[admin.RuleList](ctx, c, "PUT", admin.Prefix+"rules", admin.RuleSet{Rules: &rules}, "")
}

// Sampling returns the share of fine-mode traces recorded.
func (c *Client) Sampling(ctx context.Context) (*admin.SamplingState, error) {
	return call[admin.SamplingState](ctx, c, "GET", admin.Prefix+"sampling", nil, "")
}

// SetSampling sets the sampling rate, given as a percentage ("10%") or a
// fraction ("0.1"); the program checks it.
func (c *Client) SetSampling(ctx context.Context, rate string) (*admin.SamplingState, error) {
	return call[admin.SamplingState](ctx, c, "PUT", admin.Prefix+"sampling", map[string]string{"sampling": rate}, "")
}

// Analysis returns the analysis settings in force.
func (c *Client) Analysis(ctx context.Context) (*settings.Analysis, error) {
	return call[settings.Analysis](ctx, c, "GET", admin.Prefix+"analysis", nil, "")
}

// AnalysisChange is a change of the analysis settings: the fields set change,
// the others stay; Metrics merge into the program's bindings.
type AnalysisChange struct {
	Enabled  *bool             `json:"enabled,omitempty"`
	Criteria *string           `json:"criteria,omitempty"` // TigrisDSL filter
	Interval *string           `json:"interval,omitempty"` // e.g. "2m"
	Window   *string           `json:"window,omitempty"`   // e.g. "10m"; "0s": one interval
	Budget   *float64          `json:"budget,omitempty"`   // share of CPU time, 0: none
	Metrics  map[string]string `json:"metrics,omitempty"`  // criterion → metric
}

// Empty reports whether the change changes nothing.
func (a AnalysisChange) Empty() bool {
	return a.Enabled == nil && a.Criteria == nil && a.Interval == nil && a.Window == nil && a.Budget == nil && len(a.Metrics) == 0
}

// SetAnalysis applies the change and returns the settings in force.
func (c *Client) SetAnalysis(ctx context.Context, a AnalysisChange) (*settings.Analysis, error) {
	var expr string
	if a.Criteria != nil {
		expr = *a.Criteria
	}
	return call[settings.Analysis](ctx, c, "PUT", admin.Prefix+"analysis", a, expr)
}

// Cycle is one analysis cycle as the program reports it. The partitions stay
// undecoded: no caller shows them, and decoding them would tie the client to
// the dsl package's JSON shape.
type Cycle struct {
	analyzer.Cycle
	Partitions json.RawMessage `json:"partitions"`
}

// RunAnalysis runs one analysis cycle now and returns it.
func (c *Client) RunAnalysis(ctx context.Context) (*Cycle, error) {
	return call[Cycle](ctx, c, "POST", admin.Prefix+"analysis/run", nil, "")
}

// History returns the recent analysis cycles, oldest first.
func (c *Client) History(ctx context.Context) ([]Cycle, error) {
	h, err := call[struct {
		Cycles []Cycle `json:"cycles"` // admin.HistoryList, with Cycle for analyzer.Cycle
	}](ctx, c, "GET", admin.Prefix+"analysis/history", nil, "")
	if err != nil {
		return nil, err
	}
	return h.Cycles, nil
}

// StatsQuery selects and orders the statistics rows.
type StatsQuery struct {
	Filter
	// Sort is the key (admin.SortKeys), "" the program's default; Order "asc"
	// or "desc", "" the key's natural order.
	Sort, Order string
	// Top keeps the first Top rows; 0 keeps all.
	Top int
}

// Stats returns the coarse statistics of the probes q selects.
func (c *Client) Stats(ctx context.Context, q StatsQuery) (*admin.StatsList, error) {
	top := ""
	if q.Top != 0 {
		top = strconv.Itoa(q.Top)
	}
	return call[admin.StatsList](ctx, c, "GET", admin.Prefix+"stats"+q.query("sort", q.Sort, "order", q.Order, "top", top), nil, q.Pointcut)
}

// Writer returns the trace writer's counters and current file.
func (c *Client) Writer(ctx context.Context) (*admin.WriterState, error) {
	return call[admin.WriterState](ctx, c, "GET", admin.Prefix+"writer", nil, "")
}

// Health returns the program's liveness summary.
func (c *Client) Health(ctx context.Context) (*admin.Health, error) {
	return call[admin.Health](ctx, c, "GET", admin.Prefix+"health", nil, "")
}

// Metrics returns the Prometheus text exposition of the probes f selects.
func (c *Client) Metrics(ctx context.Context, f Filter) ([]byte, error) {
	return c.do(ctx, "GET", "/metrics"+f.query(), nil, nil, f.Pointcut)
}
