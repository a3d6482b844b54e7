package live

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/runtime/query"
	"github.com/tigrisgo/tigris/runtime/query/engine"
)

// Options bound the queries of one program. Zero fields take the defaults
// below.
type Options struct {
	// MaxQueries is how many queries and triggers may run at once.
	MaxQueries int
	// Limits bound each plan: probes acquired and estimated CPU. Budget
	// also bounds the CPU the running queries measurably use (budget.go).
	Limits engine.Limits
	// MaxMemory is the most the running queries' windows, join buffers and
	// group tables may hold together, in bytes (budget.go).
	MaxMemory int64
	// Queue is each calls source's tap queue, in calls; a fuller queue drops
	// calls and counts them (Info.Lost).
	Queue int
	// Rows is how many recent rows a query keeps for its readers.
	Rows int
	// Tick is how often a query drains its taps and samples; Lateness how
	// long after a window's end it waits for calls still in flight.
	Tick, Lateness time.Duration
	// oneIn starts each query taking one call in oneIn (tests: shedding
	// without a budget to pass).
	oneIn int
}

// The defaults of Options.
const (
	DefaultMaxQueries = 8
	DefaultMaxProbes  = 1000
	DefaultBudget     = 0.05
	DefaultQueue      = 1 << 16
	DefaultRows       = 10000
	DefaultTick       = 100 * time.Millisecond
	DefaultLateness   = 500 * time.Millisecond
	// keptEnded is how many ended queries List still shows.
	keptEnded = 16
)

func (o Options) withDefaults() Options {
	if o.MaxQueries <= 0 {
		o.MaxQueries = DefaultMaxQueries
	}
	if o.Limits == (engine.Limits{}) {
		o.Limits = engine.Limits{MaxProbes: DefaultMaxProbes, Budget: DefaultBudget}
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Rows <= 0 {
		o.Rows = DefaultRows
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.Lateness <= 0 {
		o.Lateness = DefaultLateness
	}
	return o
}

// Registry holds a program's queries and named streams. Its methods are
// safe for concurrent use.
type Registry struct {
	opts    Options
	mu      sync.Mutex
	nextID  int
	running map[int]*Query
	ended   []*Query
	streams query.Streams
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	return &Registry{opts: opts.withDefaults(), running: map[int]*Query{}, streams: query.Streams{}}
}

var (
	defaultMu  sync.Mutex
	defaultReg *Registry
)

// Default is the program's registry, the one the admin endpoint serves;
// Configure sets its options before first use.
func Default() *Registry {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultReg == nil {
		defaultReg = NewRegistry(Options{})
	}
	return defaultReg
}

// Configure sets the options of the program's registry (the admin endpoint
// calls it with the settings of tigris.yaml's queries section). Queries
// already running keep theirs.
func Configure(opts Options) {
	startMarks() // recent rates for the first EXPLAIN (recent.go)
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultReg == nil {
		defaultReg = NewRegistry(opts)
		return
	}
	defaultReg.mu.Lock()
	defaultReg.opts = opts.withDefaults()
	defaultReg.mu.Unlock()
}

// Options returns the registry's options.
func (r *Registry) Options() Options {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts
}

// Posted is what Post did with one statement of a text.
type Posted struct {
	// Query is the query started (a SELECT or a trigger), nil otherwise.
	Query *Query
	// Stream is the name of a stream created.
	Stream string
	// Plan is the statement's plan (an EXPLAIN's, or a started query's).
	Plan *engine.Plan
	// Explain is set for EXPLAIN: nothing ran.
	Explain bool
}

// RefusedError is a query whose plan is over the limits, with the plan that
// says why.
type RefusedError struct{ Plan *engine.Plan }

func (e *RefusedError) Error() string { return "query refused: " + e.Plan.Refused }

// ErrTooMany is returned when MaxQueries queries run already.
var ErrTooMany = errors.New("too many queries")

// Post compiles, plans and starts every statement of text: SELECTs and
// triggers run until cancelled (or their LIMIT), CREATE STREAMs name
// streams, EXPLAINs only plan. A detached post keeps its streams for later
// posts; an attached one's streams live only within its text (the admin
// endpoint cancels an attached query when its reader leaves). Nothing
// changes unless every statement can run: a syntax error, a refused plan or
// the limit on running queries leaves probes and names as they were.
func (r *Registry) Post(text string, detach bool) ([]Posted, error) {
	qs, err := r.Compile(text, nil)
	if err != nil {
		return nil, err
	}
	return r.Start(qs, detach)
}

// Compile compiles text against the registry's named streams, asking stop
// (nil: never) now and then whether to give up: once it says true, Compile
// returns query.ErrStopped within a bounded amount of work, whatever the
// text (a client that leaves while its long query compiles).
func (r *Registry) Compile(text string, stop func() bool) ([]*query.Query, error) {
	return query.CompileStop(text, r.Defined(), stop)
}

// Start plans and starts the statements Compile gave, as Post does.
func (r *Registry) Start(qs []*query.Query, detach bool) ([]Posted, error) {
	opts := r.Options()
	cat := readCatalog()
	var out []Posted
	starting := 0
	for _, q := range qs {
		switch {
		case q.Kind == query.KindStream && !q.Explain:
			out = append(out, Posted{Stream: q.Name})
			continue
		case q.Kind == query.KindStream:
			return nil, fmt.Errorf("EXPLAIN %s: a stream runs when a query reads it; explain that query", q.Text)
		}
		p, err := engine.New(q, cat, opts.Limits)
		if err != nil {
			return nil, err
		}
		if q.Explain {
			out = append(out, Posted{Plan: p, Explain: true})
			continue
		}
		if p.Refused == "" && p.Nothing != "" {
			// The program's probes are compiled in: none will appear.
			p.Refused = "it can produce nothing, now or later: " + p.Nothing
		}
		if p.Refused != "" {
			return nil, &RefusedError{Plan: p}
		}
		out = append(out, Posted{Plan: p})
		starting++
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkBudgetLocked(out); err != nil {
		return nil, err
	}
	if n := len(r.running); starting > 0 && n+starting > r.opts.MaxQueries {
		return nil, fmt.Errorf("%w: %d running, %d more would pass the limit of %d (queries.max); cancel one first", ErrTooMany, n, starting, r.opts.MaxQueries)
	}
	if detach {
		for _, p := range out {
			if p.Stream != "" {
				if _, dup := r.streams[p.Stream]; dup {
					return nil, fmt.Errorf("stream %q exists already", p.Stream)
				}
			}
		}
	}
	var started []*Query
	for i := range out {
		p := &out[i]
		if p.Plan == nil || p.Explain {
			continue
		}
		r.nextID++
		q, err := start(r, r.nextID, p.Plan, cat, detach, r.opts)
		if err != nil {
			for _, s := range started {
				s.stop("not started: another statement of its text failed")
			}
			return nil, err
		}
		p.Query = q
		r.running[q.ID] = q
		started = append(started, q)
	}
	if detach {
		for i, p := range out {
			if p.Stream != "" {
				r.streams[p.Stream] = qs[i]
			}
		}
	}
	return out, nil
}

// checkBudgetLocked refuses new plans when, with the running queries, their
// estimated cost passes the budget: queries.budget bounds what all the
// program's queries cost together. A running query counts the larger of its
// estimate and what it used in its last second (budget.go). Shared probes
// are counted once per query that switched them on, so the sum errs high.
func (r *Registry) checkBudgetLocked(posted []Posted) error {
	budget := r.opts.Limits.Budget * float64(time.Second)
	if budget <= 0 {
		return nil
	}
	running := 0.0
	for _, q := range r.running {
		q.mu.Lock()
		used := q.stats.CPUShare * float64(time.Second)
		q.mu.Unlock()
		running += math.Max(q.plan.CostNs, used)
	}
	for _, p := range posted {
		if p.Plan == nil || p.Explain {
			continue
		}
		if running > 0 && running+p.Plan.CostNs > budget {
			p.Plan.Refused = fmt.Sprintf("the running queries' estimated cost, %s of one core, with this query's %s, is over the budget of %s (queries.budget): cancel a query or narrow this one",
				percent(running/float64(time.Second)), percent(p.Plan.CostNs/float64(time.Second)), percent(r.opts.Limits.Budget))
			return &RefusedError{Plan: p.Plan}
		}
		running += p.Plan.CostNs
	}
	return nil
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'g', 3, 64) + "%" }

// ended moves q from running to the recently ended list.
func (r *Registry) endQuery(q *Query) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[q.ID] != q {
		return
	}
	delete(r.running, q.ID)
	r.ended = append(r.ended, q)
	if len(r.ended) > keptEnded {
		r.ended = r.ended[len(r.ended)-keptEnded:]
	}
}

// Get returns query id, running or recently ended; nil when unknown.
func (r *Registry) Get(id int) *Query {
	r.mu.Lock()
	defer r.mu.Unlock()
	if q := r.running[id]; q != nil {
		return q
	}
	for _, q := range r.ended {
		if q.ID == id {
			return q
		}
	}
	return nil
}

// List returns the running queries and the recently ended ones, by id.
func (r *Registry) List() []*Query {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]*Query(nil), r.ended...)
	for _, q := range r.running {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Cancel stops query id, restores what it acquired and returns once it has;
// false when no such query runs.
func (r *Registry) Cancel(id int) bool {
	r.mu.Lock()
	q := r.running[id]
	r.mu.Unlock()
	if q == nil {
		return false
	}
	q.stop("cancelled")
	return true
}

// Stream describes a named stream.
type Stream struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Streams lists the named streams, by name.
func (r *Registry) Streams() []Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Stream, 0, len(r.streams))
	for name, q := range r.streams {
		out = append(out, Stream{Name: name, Text: q.Text})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DropStream forgets a named stream; queries already reading it go on.
// false when there is none.
func (r *Registry) DropStream(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.streams[name]; !ok {
		return false
	}
	delete(r.streams, name)
	return true
}

// Defined returns the named streams, for checking a query against them.
func (r *Registry) Defined() query.Streams {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(query.Streams, len(r.streams))
	for k, v := range r.streams {
		out[k] = v
	}
	return out
}

// Explain plans q against the program's probes and the registry's limits;
// nothing runs.
func Explain(q *query.Query, r *Registry) (*engine.Plan, error) {
	return engine.New(q, readCatalog(), r.Options().Limits)
}
