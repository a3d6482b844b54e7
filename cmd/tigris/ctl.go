package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/monitor/analyzer"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// defaultAdminAddr is where ctl looks when neither --addr nor TIGRIS_ADMIN says.
const defaultAdminAddr = "127.0.0.1:7070"

// ctlTimeout bounds one request: the endpoint answers in milliseconds unless the
// program is stopped (SIGSTOP, a debugger) or the address is wrong.
const ctlTimeout = 10 * time.Second

// ctl is the client state the subcommands share.
type ctl struct {
	addr   string // as the user gave it, for messages
	token  string
	asJSON bool
	out    io.Writer
	client *http.Client
}

func newCtlCmd() *cobra.Command {
	c := &ctl{client: &http.Client{Timeout: ctlTimeout}}
	cmd := &cobra.Command{
		Use:   "ctl",
		Short: "See and switch the monitoring of a running program (admin endpoint client)",
		Long: `ctl talks to the admin endpoint of a running instrumented program: list the
probes, add and remove mode rules, set the sampling rate and the analysis, read
the coarse statistics, the writer state and the Prometheus metrics.

The program serves the endpoint when it starts with TIGRIS_ADMIN=host:port (or
admin.listen in tigris.yaml). ctl connects to --addr, by default $TIGRIS_ADMIN or
` + defaultAdminAddr + `. Changes need --token (default $TIGRIS_ADMIN_TOKEN) when the
program has a token. --json prints the endpoint's JSON reply instead of a table.
docs/admin-api.md describes every endpoint.`,
		Example: `  TIGRIS_ADMIN=127.0.0.1:7070 ./app &
  tigris ctl probes --match 'execution(* shop/repo.*(..))'
  tigris ctl rules add 'execution(* shop/repo.(*Store).Find*(..))' --mode fine
  tigris ctl sampling set 10%
  tigris ctl stats --sort total --top 10
  tigris ctl rules delete 0`,
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { c.out = cmd.OutOrStdout() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&c.addr, "addr", defaultAddr(), "admin endpoint address, host:port or a URL")
	pf.StringVar(&c.token, "token", os.Getenv("TIGRIS_ADMIN_TOKEN"), "bearer token for changes")
	pf.BoolVar(&c.asJSON, "json", false, "print the JSON reply")
	cmd.AddCommand(
		c.probesCmd(), c.rulesCmd(), c.enableCmd(), c.samplingCmd(), c.analysisCmd(),
		c.statsCmd(), c.writerCmd(), c.healthCmd(), c.metricsCmd(),
	)
	return cmd
}

// defaultAddr is $TIGRIS_ADMIN, the variable that made the program listen, unless
// it is unset or off.
func defaultAddr() string {
	v := strings.TrimSpace(os.Getenv("TIGRIS_ADMIN"))
	switch strings.ToLower(v) {
	case "", "off", "none", "never", "0":
		return defaultAdminAddr
	}
	return v
}

// baseURL turns --addr into the URL requests go to. A listen address without a
// host or with an unspecified one (":7070", "0.0.0.0:7070") is reached on
// loopback.
func baseURL(addr string) (string, error) {
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("--addr %q is not a URL or host:port", addr)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: want host:port such as %s", addr, defaultAdminAddr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// ctlError is the endpoint's error reply, with what the user typed when a
// column points into it.
type ctlError struct {
	status int
	body   admin.ErrorBody
	expr   string // the expression the column refers to, "" when unknown
	hint   string
}

func (e *ctlError) Error() string {
	msg := e.body.Error
	if msg == "" {
		msg = http.StatusText(e.status)
	}
	if e.hint != "" {
		msg += "; " + e.hint
	}
	if e.body.Column > 0 && e.expr != "" {
		lines := strings.Split(e.expr, "\n")
		if l := max(e.body.Line, 1); l <= len(lines) {
			line := lines[l-1]
			// Columns count characters; a tab keeps its width under the caret.
			pad := []rune(line)[:min(e.body.Column-1, utf8.RuneCountInString(line))]
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

// call sends one request and decodes a 2xx reply into out (unless nil). body
// is encoded as JSON when not nil. expr is the expression a syntax error's
// column refers to. With --json the raw reply is printed and out is not filled;
// printed reports whether that happened.
func (c *ctl) call(method, path string, body, out any, expr string) (printed bool, err error) {
	base, err := baseURL(c.addr)
	if err != nil {
		return false, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return false, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return false, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return false, c.unreachable(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return false, fmt.Errorf("reading the reply of %s: %w", c.addr, err)
	}
	if resp.StatusCode >= 300 {
		e := &ctlError{status: resp.StatusCode, expr: expr}
		if json.Unmarshal(data, &e.body) != nil || e.body.Error == "" {
			e.body.Error = fmt.Sprintf("%s %s: %s", method, path, resp.Status)
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			if c.token == "" {
				e.hint = "the program has a token: pass --token or set TIGRIS_ADMIN_TOKEN"
			}
		case http.StatusNotFound:
			if !strings.Contains(path, "/rules/") {
				e.hint = fmt.Sprintf("is %s a tigris admin endpoint of this version?", c.addr)
			}
		}
		return false, e
	}
	if c.asJSON {
		_, err := c.out.Write(data)
		return true, err
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return false, fmt.Errorf("decoding the reply of %s %s: %w", method, path, err)
		}
	}
	return false, nil
}

// unreachable explains a failed connection.
func (c *ctl) unreachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("no tigris admin endpoint at %s: connection refused; start the program with TIGRIS_ADMIN=%s", c.addr, c.addr)
	case ue != nil && ue.Timeout():
		return fmt.Errorf("tigris admin endpoint at %s did not answer within %v (is the program stopped?)", c.addr, ctlTimeout)
	}
	return fmt.Errorf("tigris admin endpoint at %s: %w", c.addr, err)
}

// table writes aligned columns; rows are tab-separated. An empty header is
// left out (key/value listings).
func (c *ctl) table(header string, rows []string) error {
	tw := tabwriter.NewWriter(c.out, 0, 0, 2, ' ', 0)
	if header != "" {
		fmt.Fprintln(tw, header)
	}
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}

// fmtNs formats nanoseconds with three significant digits: 87ns, 1.23µs, 456ms.
func fmtNs(ns float64) string {
	if !(ns >= 1) {
		return "0"
	}
	d, unit := time.Duration(ns), time.Duration(1)
	for d/unit >= 1000 {
		unit *= 10
	}
	return d.Round(unit).String()
}

func (c *ctl) probesCmd() *cobra.Command {
	var match, mode string
	cmd := &cobra.Command{
		Use:   "probes [--match POINTCUT] [--mode off|coarse|fine]",
		Short: "List the probes with their mode",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return request(c, "GET", admin.Prefix+"probes"+query("pointcut", match, "mode", mode), nil, match, func(l *admin.ProbeList) error {
				rows := make([]string, len(l.Probes))
				for i, p := range l.Probes {
					rows[i] = fmt.Sprintf("%d\t%s\t%s\t%s:%d", p.ID, p.Mode, p.Signature, p.File, p.Line)
				}
				return c.table("ID\tMODE\tSIGNATURE\tPOSITION", rows)
			})
		},
	}
	cmd.Flags().StringVar(&match, "match", "", "only probes whose function matches this pointcut")
	cmd.Flags().StringVar(&mode, "mode", "", "only probes in this mode")
	return cmd
}

// request makes one call whose reply, a T, show prints, unless --json printed
// the reply itself.
func request[T any](c *ctl, method, path string, body any, expr string, show func(*T) error) error {
	var v T
	if done, err := c.call(method, path, body, &v, expr); done || err != nil {
		return err
	}
	return show(&v)
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

func (c *ctl) rulesCmd() *cobra.Command {
	list := func(*cobra.Command, []string) error {
		return request(c, "GET", admin.Prefix+"rules", nil, "", c.printRules)
	}
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List, add, delete or replace the mode rules",
		Long: `Mode rules switch every probe whose function matches a pointcut to a mode;
the last matching rule wins. Configured rules come from tigris.yaml and
TIGRIS_RULES; manual rules, added here, come after them and win over them and
over the analyzer. "rules" alone lists them; manual rules are numbered for
"rules delete".`,
		Args: cobra.NoArgs,
		RunE: list,
	}
	var mode string
	add := &cobra.Command{
		Use:   "add POINTCUT [--mode off|coarse|fine]",
		Short: "Append a manual rule",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return c.addRule(args[0], mode)
		},
	}
	add.Flags().StringVar(&mode, "mode", "fine", "the mode the rule sets")
	cmd.AddCommand(
		&cobra.Command{Use: "list", Short: "List the configured and manual rules", Args: cobra.NoArgs, RunE: list},
		add,
		&cobra.Command{
			Use:   "delete INDEX",
			Short: "Remove the manual rule with this index (see rules list)",
			Args:  cobra.ExactArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				if _, err := strconv.Atoi(args[0]); err != nil {
					return fmt.Errorf("rules delete: %q is not an index (want 0, 1, ... as rules list numbers them)", args[0])
				}
				return request(c, "DELETE", admin.Prefix+"rules/"+args[0], nil, "", func(rc *admin.RuleChange) error {
					_, err := fmt.Fprintf(c.out, "deleted rule %d: %s %s\n", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
					return err
				})
			},
		},
		&cobra.Command{
			Use:   "set RULE... | none",
			Short: "Replace all manual rules (each RULE is mode:pointcut)",
			Example: `  tigris ctl rules set 'fine:execution(* shop/repo.*(..))' 'off:execution(* shop/repo.Ping(..))'
  tigris ctl rules set none`,
			Args: cobra.MinimumNArgs(1),
			RunE: func(_ *cobra.Command, args []string) error {
				rules := []settings.Rule{}
				for _, a := range args {
					rs, err := settings.ParseRules(a)
					if err != nil {
						return fmt.Errorf("rules set: %w", err)
					}
					rules = append(rules, rs...)
				}
				return request(c, "PUT", admin.Prefix+"rules", admin.RuleSet{Rules: &rules}, "", c.printRules)
			},
		},
	)
	return cmd
}

func (c *ctl) addRule(pattern, mode string) error {
	return request(c, "POST", admin.Prefix+"rules", settings.Rule{Pattern: pattern, Mode: settings.Mode(mode)}, pattern, func(rc *admin.RuleChange) error {
		_, err := fmt.Fprintf(c.out, "added rule %d: %s %s\n", rc.Index, rc.Rule.Mode, rc.Rule.Pattern)
		return err
	})
}

func (c *ctl) printRules(l *admin.RuleList) error {
	var rows []string
	for _, r := range l.Configured {
		rows = append(rows, fmt.Sprintf("config\t%s\t%s", r.Mode, r.Pattern))
	}
	for i, r := range l.Manual {
		rows = append(rows, fmt.Sprintf("%d\t%s\t%s", i, r.Mode, r.Pattern))
	}
	return c.table("#\tMODE\tPATTERN", rows)
}

// enableCmd is the one-step form of DESIGN.md's user story: a rule and, if
// given, the sampling rate.
func (c *ctl) enableCmd() *cobra.Command {
	var mode, sampling string
	cmd := &cobra.Command{
		Use:   "enable POINTCUT [--mode fine] [--sampling RATE]",
		Short: "Switch the matching probes to a mode (rules add, then sampling set)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if sampling != "" {
				// Checked first, so a bad rate adds no rule.
				if _, err := settings.ParsePercent(sampling); err != nil {
					return fmt.Errorf("enable: --sampling: %w", err)
				}
			}
			if err := c.addRule(args[0], mode); err != nil || sampling == "" {
				return err
			}
			return c.setSampling(sampling)
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "fine", "the mode to switch to")
	cmd.Flags().StringVar(&sampling, "sampling", "", "also set the sampling rate, e.g. 10%")
	return cmd
}

func (c *ctl) samplingCmd() *cobra.Command {
	get := func(*cobra.Command, []string) error {
		return request(c, "GET", admin.Prefix+"sampling", nil, "", c.printSampling)
	}
	cmd := &cobra.Command{
		Use:   "sampling",
		Short: "Show or set the share of fine-mode traces recorded",
		Args:  cobra.NoArgs,
		RunE:  get,
	}
	cmd.AddCommand(
		&cobra.Command{Use: "get", Short: "Show the sampling rate", Args: cobra.NoArgs, RunE: get},
		&cobra.Command{
			Use:     "set RATE",
			Short:   "Set the sampling rate: a percentage (10%) or a fraction (0.1)",
			Example: "  tigris ctl sampling set 10%",
			Args:    cobra.ExactArgs(1),
			RunE:    func(_ *cobra.Command, args []string) error { return c.setSampling(args[0]) },
		},
	)
	return cmd
}

func (c *ctl) setSampling(rate string) error {
	return request(c, "PUT", admin.Prefix+"sampling", map[string]string{"sampling": rate}, "", c.printSampling)
}

func (c *ctl) printSampling(s *admin.SamplingState) error {
	_, err := fmt.Fprintf(c.out, "sampling %s%s\n", s.Percent, inForce(s.EffectivePercent, s.Percent, s.Reason))
	return err
}

// inForce says which rate is in force while an overhead budget is set, and
// why: " configured, 0.5% in force: overhead budget 1% of CPU: ...".
func inForce(effective, configured, reason string) string {
	switch {
	case reason == "":
		return ""
	case effective == configured:
		return " (" + reason + ")"
	}
	return " configured, " + effective + " in force: " + reason
}

// cycleView decodes an analyzer.Cycle. The partitions stay raw: ctl does not
// show them, and decoding them would tie ctl to the dsl package's JSON shape.
type cycleView struct {
	analyzer.Cycle
	Partitions json.RawMessage `json:"partitions"`
}

// historyView decodes admin.HistoryList, as cycleView does a cycle.
type historyView struct {
	Cycles []cycleView `json:"cycles"`
}

func (c *ctl) analysisCmd() *cobra.Command {
	get := func(*cobra.Command, []string) error {
		return request(c, "GET", admin.Prefix+"analysis", nil, "", c.printAnalysis)
	}
	cmd := &cobra.Command{
		Use:   "analysis",
		Short: "Show or change the two-phase analysis, run it, show its history",
		Args:  cobra.NoArgs,
		RunE:  get,
	}
	var (
		enabled, criteria, interval, window, budget string
		metrics                                     []string
	)
	set := &cobra.Command{
		Use:   "set [--enabled on|off] [--criteria FILTER] [--interval D] [--window D] [--budget RATE] [--metric criterion=metric]...",
		Short: "Change the analysis settings; settings not given stay",
		Example: `  tigris ctl analysis set --enabled on --criteria '(more frequent ∪ most expensive) ∩ least changeable'
  tigris ctl analysis set --interval 30s --metric expensive=mean-time`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			body := map[string]any{}
			f := cmd.Flags()
			if f.Changed("enabled") {
				on, err := settings.ParseBool(enabled)
				if err != nil {
					return fmt.Errorf("analysis set: --enabled: %w", err)
				}
				body["enabled"] = on
			}
			if f.Changed("criteria") {
				body["criteria"] = criteria
			}
			if f.Changed("interval") {
				body["interval"] = interval
			}
			if f.Changed("window") {
				body["window"] = window
			}
			if f.Changed("budget") {
				b, err := settings.ParsePercent(budget)
				if err != nil {
					return fmt.Errorf("analysis set: --budget: %w", err)
				}
				body["budget"] = b
			}
			if len(metrics) > 0 {
				m := map[string]string{}
				for _, kv := range metrics {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" || v == "" {
						return fmt.Errorf("analysis set: --metric %q: want criterion=metric, e.g. expensive=mean-time", kv)
					}
					m[k] = v
				}
				body["metrics"] = m
			}
			if len(body) == 0 {
				return errors.New("analysis set: nothing to change (give --enabled, --criteria, --interval, --window, --budget or --metric)")
			}
			return request(c, "PUT", admin.Prefix+"analysis", body, criteria, c.printAnalysis)
		},
	}
	sf := set.Flags()
	sf.StringVar(&enabled, "enabled", "", "run the analysis loop: on or off")
	sf.StringVar(&criteria, "criteria", "", "TigrisDSL relevance filter")
	sf.StringVar(&interval, "interval", "", "time between cycles, e.g. 2m")
	sf.StringVar(&window, "window", "", "history the statistics cover, e.g. 10m (0: one interval)")
	sf.StringVar(&budget, "budget", "", "overhead budget, e.g. 2% (0: none)")
	sf.StringArrayVar(&metrics, "metric", nil, "bind a criterion to a metric, criterion=metric (repeatable)")

	var last int
	history := &cobra.Command{
		Use:   "history [--last N]",
		Short: "Show the recent analysis cycles, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return request(c, "GET", admin.Prefix+"analysis/history", nil, "", func(h *historyView) error {
				cycles := h.Cycles
				if last > 0 && last < len(cycles) {
					cycles = cycles[len(cycles)-last:]
				}
				rows := make([]string, len(cycles))
				for i, cy := range cycles {
					rows[i] = fmt.Sprintf("%d\t%s\t%s\t%d\t%d\t+%d -%d\t%s\t%s", cy.Seq, cy.At.Local().Format(time.TimeOnly), cy.Trigger,
						cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), settings.FormatPercent(cy.Sampling), cy.Err)
				}
				return c.table("SEQ\tAT\tTRIGGER\tCANDIDATES\tSELECTED\tCHANGE\tSAMPLING\tERROR", rows)
			})
		},
	}
	history.Flags().IntVar(&last, "last", 0, "show only the last N cycles (0: all)")

	cmd.AddCommand(
		&cobra.Command{Use: "get", Short: "Show the analysis settings", Args: cobra.NoArgs, RunE: get},
		set,
		&cobra.Command{
			Use:   "run",
			Short: "Run one analysis cycle now and show its selection",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				return request(c, "POST", admin.Prefix+"analysis/run", nil, "", c.printCycle)
			},
		},
		history,
	)
	return cmd
}

func (c *ctl) printAnalysis(a *settings.Analysis) error {
	on := "off"
	if a.Enabled {
		on = "on"
	}
	rows := []string{
		"enabled\t" + on,
		"criteria\t" + a.Criteria,
		"interval\t" + a.Interval.String(),
		"window\t" + a.Window.String(),
		"budget\t" + settings.FormatPercent(a.Budget),
	}
	keys := make([]string, 0, len(a.Metrics))
	for k := range a.Metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		rows = append(rows, "metric "+k+"\t"+a.Metrics[k])
	}
	return c.table("SETTING\tVALUE", rows)
}

func (c *ctl) printCycle(cy *cycleView) error {
	fmt.Fprintf(c.out, "cycle %d (%s): %d candidates, %d selected (+%d -%d), sampling %s\ncriteria: %s\n",
		cy.Seq, cy.Trigger, cy.Candidates, len(cy.Selected), len(cy.Added), len(cy.Removed), settings.FormatPercent(cy.Sampling), cy.Criteria)
	if cy.Why != "" {
		_, err := fmt.Fprintln(c.out, cy.Why)
		return err
	}
	rows := make([]string, len(cy.Selected))
	for i, s := range cy.Selected {
		rows[i] = s + "\t" + strings.Join(cy.Reasons[s], "; ")
	}
	return c.table("SELECTED\tWHY", rows)
}

func (c *ctl) statsCmd() *cobra.Command {
	var sortBy, order, match, mode string
	var top int
	cmd := &cobra.Command{
		Use:   "stats [--sort KEY] [--order asc|desc] [--top N] [--match POINTCUT] [--mode MODE]",
		Short: "Show the coarse statistics per probe since the program started",
		Long: `stats prints each probe's calls, mean and standard deviation of the duration,
total time, errors, panics and mean concurrency, measured while the probe was
coarse or fine. --sort takes ` + strings.Join(admin.SortKeys, ", ") + `;
quantities sort largest first, id and signature smallest first, unless --order
says otherwise.`,
		Example: `  tigris ctl stats --sort total --top 10
  tigris ctl stats --match 'execution(* shop/repo.*(..))' --sort errors`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var l admin.StatsList
			q := query("sort", sortBy, "order", order, "top", strconv.Itoa(top), "pointcut", match, "mode", mode)
			if done, err := c.call("GET", admin.Prefix+"stats"+q, nil, &l, match); done || err != nil {
				return err
			}
			rows := make([]string, len(l.Stats))
			for i, s := range l.Stats {
				rows[i] = fmt.Sprintf("%d\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%.2f\t%s", s.ID, s.Mode, s.Count, fmtNs(s.MeanNs), fmtNs(s.StdDevNs),
					fmtNs(s.TotalNs), s.Errors, s.Panics, s.Concurrency, s.Signature)
			}
			if err := c.table("ID\tMODE\tCALLS\tMEAN\tSTDDEV\tTOTAL\tERRORS\tPANICS\tCONC\tSIGNATURE", rows); err != nil {
				return err
			}
			if len(l.Stats) < l.Matched {
				_, err := fmt.Fprintf(c.out, "(%d of %d probes, by %s %s)\n", len(l.Stats), l.Matched, l.Sort, l.Order)
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&sortBy, "sort", "total", "sort key")
	f.StringVar(&order, "order", "", "asc or desc (default: by key)")
	f.IntVar(&top, "top", 0, "show only the first N probes (0: all)")
	f.StringVar(&match, "match", "", "only probes whose function matches this pointcut")
	f.StringVar(&mode, "mode", "", "only probes in this mode")
	return cmd
}

func (c *ctl) writerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "writer",
		Short: "Show the trace writer's counters and current file",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return request(c, "GET", admin.Prefix+"writer", nil, "", func(w *admin.WriterState) error {
				if !w.Active {
					_, err := fmt.Fprintln(c.out, "no writer open (it opens when a probe first goes fine)")
					return err
				}
				return c.table("", []string{
					fmt.Sprintf("file\t%s", w.CurrentFile),
					fmt.Sprintf("written\t%d records", w.Written),
					fmt.Sprintf("queued\t%d records", w.Queued),
					fmt.Sprintf("dropped\t%d records", w.Dropped),
					fmt.Sprintf("bytes\t%s", strconv.FormatUint(w.Bytes, 10)),
					fmt.Sprintf("files\t%d", w.Files),
					fmt.Sprintf("errors\t%d", w.Errors),
				})
			})
		},
	}
}

func (c *ctl) healthCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check that the program answers, with a summary",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return request(c, "GET", admin.Prefix+"health", nil, "", func(h *admin.Health) error {
				_, err := fmt.Fprintf(c.out, "%s: pid %d, %s, up %s, %d probes (%d off, %d coarse, %d fine), sampling %s%s\n",
					h.Status, h.PID, h.Go, time.Duration(h.UptimeSeconds*1e9).Round(time.Second), h.Probes,
					h.Modes[settings.Off], h.Modes[settings.Coarse], h.Modes[settings.Fine], settings.FormatPercent(h.Sampling),
					inForce(settings.FormatPercent(h.EffectiveSampling), settings.FormatPercent(h.Sampling), h.SamplingReason))
				return err
			})
		},
	}
}

func (c *ctl) metricsCmd() *cobra.Command {
	var match, mode string
	cmd := &cobra.Command{
		Use:   "metrics [--match POINTCUT] [--mode MODE]",
		Short: "Print the Prometheus metrics the program exposes on /metrics",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			// The reply is text, not JSON: print it as it comes (--json too).
			asJSON := c.asJSON
			c.asJSON = true
			defer func() { c.asJSON = asJSON }()
			_, err := c.call("GET", "/metrics"+query("pointcut", match, "mode", mode), nil, nil, match)
			return err
		},
	}
	cmd.Flags().StringVar(&match, "match", "", "only probes whose function matches this pointcut")
	cmd.Flags().StringVar(&mode, "mode", "", "only probes in this mode")
	return cmd
}
