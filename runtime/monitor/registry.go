package monitor

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tigrisgo/tigris/runtime/pointcut"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// registry holds every probe of the binary and the rules that set their modes.
// Everything here is off the hot path and guarded by mu.
var registry struct {
	mu     sync.Mutex
	probes []*Probe
	cfg    settings.Runtime
	// base are the configured rules (tigris.yaml, TIGRIS_RULES); manual are the
	// rules people add at run time (API, admin endpoint). Manual rules win over the
	// analyzer, whose choices win over base rules.
	base, manual []compiledRule
	analyzer     map[uint32]uint32 // probe id → mode chosen by the last analysis
	// floors are the modes queries need (query.go): they raise a probe's
	// mode, never lower it.
	floors     map[uint32]*floor
	configured bool
	sinkChosen bool // the writer was opened, or SetSink chose a sink
	// What the binary links (Links): the exit hook is registered, the admin
	// starter ran, a requested endpoint that is not linked was reported, the
	// analysis loop runs.
	atExit, admin, adminMissing, analyzerRuns bool
}

type compiledRule struct {
	settings.Rule
	pc *pointcut.Pointcut
}

var started atomic.Bool

// linkedSettings holds the run-time settings of the build. The tigris link
// proxy sets it with -X (see rewriter.Session.LinkFlags): settings live in the
// linker's input, not the compiler's, so changing them recompiles nothing.
var linkedSettings string

// Register adds probes made by hand (tests, programs that probe their own
// functions) with settings in the encoding of settings.Runtime.Encode; ""
// stands for the settings linked into the binary. Generated code calls
// RegisterPackage instead. The first registration applies the settings. It
// never panics: bad metadata is reported and the probes stay off.
func Register(embedded string, probes []Probe, infos []ProbeInfo) {
	register(embedded, probes, givenDescs(probes, infos), Links{})
}

// register adds probes whose descriptions are d. What it does is the same
// whatever the number of probes, but for a few stores a probe: it decodes
// no description (the rules' patterns do, when there are rules) and
// allocates no statistics (a probe gets them at its first call), so a
// program of thousands of probes starts as fast as one of a few
// (TestRegisterConstantWork). A nil d (reported) registers nothing.
func register(embedded string, probes []Probe, d *descs, links Links) {
	defer recoverInternal("register")
	if d == nil {
		return
	}
	ensureLayout()
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if !registry.configured {
		configure(embedded)
	}
	if n := len(registry.probes) + len(probes); n > cap(registry.probes) {
		grown := make([]*Probe, len(registry.probes), n+n/4)
		copy(grown, registry.probes)
		registry.probes = grown
	}
	d.first = uint32(len(registry.probes) + 1)
	// Without rules, analysis choices, queries' floors or shed probes every
	// probe gets the configured mode: modeOf, which would say the same, is
	// not asked a probe at a time.
	uniform := len(registry.base) == 0 && len(registry.manual) == 0 && len(registry.analyzer) == 0 &&
		len(registry.floors) == 0 && !phase1Sheds()
	m, _ := parseMode(registry.cfg.Mode)
	for i := range probes {
		p := &probes[i]
		p.id = uint32(len(registry.probes) + 1)
		p.descs = d
		p.stats.Store(&noStats)
		registry.probes = append(registry.probes, p)
		if !uniform {
			m = modeOf(len(registry.probes) - 1)
		}
		p.mode.Store(m)
		if m == modeFine {
			ensureWriterLocked()
		}
	}
	startOnce.Do(start)
	link(links)
}

// configure applies the embedded settings and TIGRIS_* overrides. A bad override
// is reported and ignored as a whole, so the build's settings still apply.
func configure(embedded string) {
	registry.configured = true
	if embedded == "" {
		embedded = linkedSettings
	}
	cfg, err := settings.Decode(embedded)
	if embedded == "" {
		// Linked without tigris's link step (the linker flag is missing).
		err = errors.New("none linked into the binary (was it linked through tigris toolexec?)")
	}
	if err != nil {
		report(fmt.Errorf("embedded settings: %v; using defaults", err))
		cfg = settings.Default()
	}
	withEnv := cfg
	if err := settings.ApplyEnv(&withEnv, os.Getenv); err != nil {
		report(fmt.Errorf("ignoring TIGRIS_* overrides: %v", err))
	} else if err := withEnv.Validate(); err != nil {
		report(fmt.Errorf("ignoring TIGRIS_* overrides: %v", err))
	} else {
		cfg = withEnv
	}
	registry.cfg = cfg
	summaries.Store(cfg.Summaries)
	followParent.Store(cfg.FollowParent)
	named := make([]pointcut.Named, len(cfg.Pointcuts))
	for i, n := range cfg.Pointcuts {
		named[i] = pointcut.Named{Name: n.Name, Expr: n.Expr}
	}
	// The named pointcuts are parsed when the first pattern is (a rule here,
	// or later the API's): building the grammar is most of a millisecond,
	// which a program without rules never needs to pay at start.
	patterns.Store(&lazyEnv{named: named})
	base, err := compileRules(cfg.Rules)
	if err != nil {
		report(fmt.Errorf("rules: %v", err))
	}
	registry.base = base
	setSamplingLocked(cfg.Sampling)
}

func compileRules(rules []settings.Rule) ([]compiledRule, error) {
	out := make([]compiledRule, 0, len(rules))
	for _, r := range rules {
		m, err := parseMode(r.Mode)
		if err != nil {
			return out, err
		}
		_ = m
		pc, err := parsePattern(r.Pattern)
		if err != nil {
			return out, fmt.Errorf("rule %q: %w", r.Pattern, err)
		}
		out = append(out, compiledRule{Rule: r, pc: pc})
	}
	return out, nil
}

// patterns resolves the named pointcuts of the configuration in rule patterns.
var patterns atomic.Pointer[lazyEnv]

// lazyEnv holds the configuration's named pointcuts, parsed at their first use.
type lazyEnv struct {
	named []pointcut.Named
	once  sync.Once
	env   *pointcut.Env // nil when they do not parse (reported)
}

func (l *lazyEnv) get() *pointcut.Env {
	l.once.Do(func() {
		env, err := pointcut.NewEnv(l.named)
		if err != nil {
			report(fmt.Errorf("named pointcuts: %v", err))
			return
		}
		l.env = env
	})
	return l.env
}

// parsePattern parses a pointcut expression; names of the configuration's named
// pointcuts resolve.
func parsePattern(expr string) (*pointcut.Pointcut, error) {
	if l := patterns.Load(); l != nil {
		if env := l.get(); env != nil {
			return env.Parse(expr)
		}
	}
	return pointcut.Parse(expr)
}

// ParsePattern parses a pointcut expression as rules and probe filters do.
func ParsePattern(expr string) (*pointcut.Pointcut, error) { return parsePattern(expr) }

func parseMode(m settings.Mode) (uint32, error) {
	switch m {
	case settings.Off:
		return modeOff, nil
	case settings.Coarse:
		return modeCoarse, nil
	case settings.Fine:
		return modeFine, nil
	}
	return 0, fmt.Errorf("%q is not a mode (want off, coarse or fine)", m)
}

func modeName(m uint32) settings.Mode {
	switch m {
	case modeCoarse:
		return settings.Coarse
	case modeFine:
		return settings.Fine
	}
	return settings.Off
}

// modeOf evaluates the layers for probe index i: default, base rules (last match
// wins), the analyzer's choice, manual rules (last match wins), and then the
// queries' floor, which only raises it.
func modeOf(i int) uint32 {
	m, chosen := ruledModeOf(i) // may decode the probe's table (rules)
	if registry.probes[i].descs.bad.Load() {
		return modeOff // its table did not decode
	}
	if m == modeCoarse && !chosen && shedByPhase1(registry.probes[i]) {
		m = modeOff // phase1.go
	}
	if f := floorOf(registry.probes[i].id); f > m {
		m = f
	}
	return m
}

// ruledModeOf is modeOf without the queries' floors and phase 1; chosen
// reports that the analyzer or a manual rule set it.
func ruledModeOf(i int) (m uint32, chosen bool) {
	m = baseModeOf(i)
	if am, ok := registry.analyzer[registry.probes[i].id]; ok {
		m, chosen = am, true
	}
	if len(registry.manual) == 0 {
		return m, chosen
	}
	sig := registry.probes[i].info().signature()
	for j := len(registry.manual) - 1; j >= 0; j-- {
		if registry.manual[j].pc.MatchExecution(&sig) {
			m, _ = parseMode(registry.manual[j].Mode)
			return m, true
		}
	}
	return m, chosen
}

// baseModeOf is the mode the configuration alone gives probe index i: the default
// and the base rules. The analyzer leaves probes it says off alone.
func baseModeOf(i int) uint32 {
	m, _ := parseMode(registry.cfg.Mode)
	if len(registry.base) == 0 {
		return m
	}
	sig := registry.probes[i].info().signature()
	for j := len(registry.base) - 1; j >= 0; j-- {
		if registry.base[j].pc.MatchExecution(&sig) {
			m, _ = parseMode(registry.base[j].Mode)
			break
		}
	}
	return m
}

// reevaluate sets every probe's mode after a rule change: once per change, never
// on the hot path.
func reevaluate() {
	for i, p := range registry.probes {
		m := modeOf(i)
		p.mode.Store(m)
		if m == modeFine {
			ensureWriterLocked()
		}
	}
}

func (in *ProbeInfo) signature() pointcut.Signature {
	s := pointcut.Signature{
		Package: in.Package, Recv: in.Recv, RecvPtr: in.RecvPtr, Name: in.Name,
		Params: in.Params, Results: in.Results, File: in.File, Line: in.Line,
		Flags: pointcut.Flags(in.Flags),
	}
	if s.Flags.Has(pointcut.Literal) { // Name holds the literal's whole Go name
		s.Name, s.Lit = pointcut.SplitLiteral(in.Name)
	}
	return s
}

// Signature renders the probe's Go signature, e.g.
// "example.com/shop/repo.(*Store).Find(int) (Owner, error)". Generic functions
// and methods of generic types get "[...]" where Go's own symbol names have it
// (tracebacks, pprof): "shop.Max[...](T, T) T", "shop.(*Stack[...]).Pop() (T, bool)".
// A function literal's is its Go name: "shop.NewHandler.func1(...)",
// "shop.Max[...].func1(T)".
func (in *ProbeInfo) Signature() string {
	generic := ""
	if pointcut.Flags(in.Flags).Has(pointcut.Generic) {
		generic = "[...]"
	}
	s := in.Package + "."
	switch {
	case in.Recv != "" && in.RecvPtr:
		s += "(*" + in.Recv + generic + ")."
	case in.Recv != "":
		s += in.Recv + generic + "."
	}
	name, lit := in.Name, ""
	if pointcut.Flags(in.Flags).Has(pointcut.Literal) {
		name, lit = pointcut.SplitLiteral(in.Name)
	}
	s += name
	if in.Recv == "" {
		s += generic
	}
	s += lit + "(" + join(in.Params) + ")"
	switch len(in.Results) {
	case 0:
	case 1:
		s += " " + in.Results[0]
	default:
		s += " (" + join(in.Results) + ")"
	}
	return s
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
