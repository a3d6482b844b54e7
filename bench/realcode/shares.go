package realcode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tigrisgo/tigris/rewriter"
)

// Shares say how much of a module's CPU time, in a CPU profile of its plain
// build's benchmarks, lies in functions that carry a probe under the config
// tigris init writes, and how much of it their statistics still measure.
// The module's functions are those whose source file is in the module's
// copy and is no _test.go file; a function is probed when tigris match
// lists it instrumented. Each share is a fraction of one; NaN without
// samples.
type Shares struct {
	// Samples are the profile's samples with a frame of the module, and
	// CPUSeconds their CPU time.
	Samples    int     `json:"samples"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// Inclusive is the probed functions' inclusive time (pprof's cum: a
	// sample counts once for every function on its stack) over that of all
	// the module's functions.
	Inclusive float64 `json:"inclusive"`
	// Exclusive is the probed functions' own time (pprof's flat: the
	// sample's innermost frame, a function inlined into its caller being a
	// frame of its own) over the module's own time.
	Exclusive float64 `json:"exclusive"`
	// Measured is the share of the module's CPU time (samples with a frame
	// of the module) during which a probed function is on the stack: what
	// the probes' inclusive durations cover, calls of functions without a
	// probe included.
	Measured float64 `json:"measured"`
	// ExclusiveInlined and ExclusiveSmall are the module's own time in
	// functions left without a probe because the compiler inlines them and
	// because they are too small to be worth one; the rest of the own time
	// without a probe is in functions the config cannot probe or does not
	// select (closures, assembly, //go:nosplit, …).
	ExclusiveInlined float64 `json:"exclusiveInlined"`
	ExclusiveSmall   float64 `json:"exclusiveSmall"`
	// Unprobed are the module's functions without a probe with the most
	// own time (share of the module's own time), at most topFuncs.
	Unprobed []FuncShare `json:"unprobed,omitempty"`
	// Unmeasured are where the time no probe measures enters the module:
	// the outermost frame of the module of those samples (share of the
	// module's time), at most topFuncs.
	Unmeasured []FuncShare `json:"unmeasured,omitempty"`
}

// FuncShare is a function's share of some time, and why it has no probe:
// "inlined", "small" or "other" (not selected, a closure, assembly, …).
type FuncShare struct {
	Name  string  `json:"name"`
	Why   string  `json:"why"`
	Share float64 `json:"share"`
}

// topFuncs is how many functions Shares.Unprobed and Unmeasured name.
const topFuncs = 5

// sharesJSON is Shares in JSON: a share that is NaN is null.
type sharesJSON struct {
	sharesFields
	Inclusive        *float64 `json:"inclusive"`
	Exclusive        *float64 `json:"exclusive"`
	Measured         *float64 `json:"measured"`
	ExclusiveInlined *float64 `json:"exclusiveInlined"`
	ExclusiveSmall   *float64 `json:"exclusiveSmall"`
}

// sharesFields are Shares' fields without its methods; sharesJSON's own
// fields take the place of its shares.
type sharesFields Shares

// MarshalJSON writes NaN as null.
func (s Shares) MarshalJSON() ([]byte, error) {
	f := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(sharesJSON{sharesFields(s), f(s.Inclusive), f(s.Exclusive), f(s.Measured), f(s.ExclusiveInlined), f(s.ExclusiveSmall)})
}

// UnmarshalJSON reads null as NaN.
func (s *Shares) UnmarshalJSON(b []byte) error {
	var v sharesJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	g := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	*s = Shares(v.sharesFields)
	s.Inclusive, s.Exclusive, s.Measured = g(v.Inclusive), g(v.Exclusive), g(v.Measured)
	s.ExclusiveInlined, s.ExclusiveSmall = g(v.ExclusiveInlined), g(v.ExclusiveSmall)
	return nil
}

// funcClass is what the config does with one function of a profile.
type funcClass uint8

const (
	outside  funcClass = iota // not the module's: std, runtime, tests, dependencies
	probed                    // the module's, with a probe
	inlined                   // the module's, no probe: the compiler inlines it
	small                     // the module's, no probe: too small to be worth one
	unprobed                  // the module's, no probe for another reason or not selected
	nClasses
)

var classWhy = [nClasses]string{inlined: "inlined", small: "small", unprobed: "other"}

// probeMap says what a config does with the module's functions, by the
// path of their file relative to the module's root and the line of their
// name (that of their func keyword, which a profile records).
type probeMap struct {
	roots []string // the module's root, as given and with symlinks resolved
	class map[string]funcClass
}

// classify is the class of a profile's function.
func (m *probeMap) classify(f profFunc) funcClass {
	rel, ok := m.rel(f.File)
	if !ok || strings.HasSuffix(rel, "_test.go") {
		return outside
	}
	if c, ok := m.class[rel+":"+strconv.FormatInt(f.StartLine, 10)]; ok {
		return c
	}
	return unprobed
}

// rel is file relative to the module's root, with slashes, if it is inside.
func (m *probeMap) rel(file string) (string, bool) {
	file = filepath.ToSlash(file)
	for _, r := range m.roots {
		r = strings.TrimSuffix(filepath.ToSlash(r), "/") + "/"
		if strings.HasPrefix(file, r) {
			return strings.TrimPrefix(file, r), true
		}
	}
	return "", false
}

// matchEntry is the part of `tigris match --json` read.
type matchEntry struct {
	Pos     string `json:"pos"`
	Skipped string `json:"skipped"`
}

// newProbeMap reads `tigris match --json -v` output run in root: every
// matched function, with or without a probe.
func newProbeMap(root string, matchJSON []byte) (*probeMap, error) {
	var entries []matchEntry
	if err := json.Unmarshal(matchJSON, &entries); err != nil {
		return nil, fmt.Errorf("reading tigris match --json: %w", err)
	}
	m := &probeMap{roots: []string{root}, class: make(map[string]funcClass, len(entries))}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		m.roots = append(m.roots, real)
	}
	for _, e := range entries {
		// file:line:col
		i := strings.LastIndexByte(e.Pos, ':')
		if i < 0 {
			return nil, fmt.Errorf("tigris match --json: position %q", e.Pos)
		}
		j := strings.LastIndexByte(e.Pos[:i], ':')
		if j < 0 {
			return nil, fmt.Errorf("tigris match --json: position %q", e.Pos)
		}
		file, line := e.Pos[:j], e.Pos[j+1:i]
		if !filepath.IsAbs(file) {
			file = filepath.Join(root, file)
		}
		rel, ok := m.rel(file)
		if !ok {
			continue
		}
		c := unprobed
		switch {
		case e.Skipped == "":
			c = probed
		case e.Skipped == rewriter.InlinedReason:
			c = inlined
		case rewriter.IsSmall(e.Skipped):
			c = small
		}
		m.class[rel+":"+line] = c
	}
	return m, nil
}

// shareSums add up profiles' samples for Shares.
type shareSums struct {
	samples             int
	moduleNs, coveredNs int64           // samples with a frame of the module; of those, with a probed one
	cum, flat           [nClasses]int64 // by class
	seen                []int           // per function of the current profile: the last sample that counted it, plus one
	// By function without a probe: own time; time no probe measures
	// entering the module there.
	unprobedNs, unmeasuredNs map[FuncShare]int64
}

// add counts p's samples, classifying its functions with m.
func (s *shareSums) add(p *cpuProfile, m *probeMap) {
	class := make([]funcClass, len(p.Funcs))
	for i, f := range p.Funcs {
		class[i] = m.classify(f)
	}
	s.seen = make([]int, len(p.Funcs))
	for si, sample := range p.Samples {
		st := p.stack(sample)
		inModule, covered := false, false
		for _, fi := range st {
			c := class[fi]
			if c == outside {
				continue
			}
			inModule = true
			covered = covered || c == probed
			if s.seen[fi] != si+1 {
				s.seen[fi] = si + 1
				s.cum[c] += sample.Nanos
			}
		}
		if !inModule {
			continue
		}
		s.samples++
		s.moduleNs += sample.Nanos
		if covered {
			s.coveredNs += sample.Nanos
		} else {
			for i := len(st) - 1; i >= 0; i-- {
				if c := class[st[i]]; c != outside {
					s.count(&s.unmeasuredNs, FuncShare{Name: p.Funcs[st[i]].Name, Why: classWhy[c]}, sample.Nanos)
					break
				}
			}
		}
		if c := class[st[0]]; c != outside {
			s.flat[c] += sample.Nanos
			if c != probed {
				s.count(&s.unprobedNs, FuncShare{Name: p.Funcs[st[0]].Name, Why: classWhy[c]}, sample.Nanos)
			}
		}
	}
}

func (s *shareSums) count(m *map[FuncShare]int64, f FuncShare, ns int64) {
	if *m == nil {
		*m = map[FuncShare]int64{}
	}
	(*m)[f] += ns
}

// top are the topFuncs functions of m with the most time, each as a share
// of total.
func top(m map[FuncShare]int64, total int64) []FuncShare {
	var out []FuncShare
	for f, ns := range m {
		f.Share = float64(ns) / float64(total)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b FuncShare) int {
		if c := cmp.Compare(b.Share, a.Share); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(len(out), topFuncs)]
}

// shares are the sums' Shares.
func (s *shareSums) shares() Shares {
	ratio := func(a, b int64) float64 {
		if b <= 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	var cum, flat int64
	for c := probed; c < nClasses; c++ {
		cum += s.cum[c]
		flat += s.flat[c]
	}
	return Shares{
		Samples: s.samples, CPUSeconds: float64(s.moduleNs) / 1e9,
		Inclusive: ratio(s.cum[probed], cum), Exclusive: ratio(s.flat[probed], flat),
		Measured:         ratio(s.coveredNs, s.moduleNs),
		ExclusiveInlined: ratio(s.flat[inlined], flat), ExclusiveSmall: ratio(s.flat[small], flat),
		Unprobed: top(s.unprobedNs, flat), Unmeasured: top(s.unmeasuredNs, s.moduleNs),
	}
}

// profile runs the module's benchmarks once more with the plain binary and
// -test.cpuprofile (ProfileTime each), and computes the Shares of the
// default build's probes: tigris match --json -v with the config tigris
// init wrote says which functions carry one.
func (d *Driver) profile(ctx context.Context, p Plan, pm *prepared, root, cfg, work string) (Shares, error) {
	cmd := exec.CommandContext(ctx, d.Tigris, "match", "--json", "-v", "--config", cfg, "./...")
	cmd.Dir, cmd.Env = root, goEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return Shares{}, fmt.Errorf("tigris match --json -v: %v\n%s", err, strings.TrimSpace(stderr.String()))
	}
	m, err := newProbeMap(root, stdout.Bytes())
	if err != nil {
		return Shares{}, err
	}
	dir, err := os.MkdirTemp(work, "profile-")
	if err != nil {
		return Shares{}, err
	}
	defer os.RemoveAll(dir)
	var sums shareSums
	for i, expr := range pm.mod.Bench {
		name := filepath.Join(dir, fmt.Sprintf("cpu%d.pprof", i))
		args := []string{"-test.run=^$", "-test.bench=" + expr, "-test.benchtime=" + p.ProfileTime.String(),
			"-test.count=1", "-test.cpu=1", "-test.cpuprofile=" + name}
		if _, err := command(ctx, pm.dir, benchEnv(), append([]string{pm.bins[BuildPlain]}, args...)...); err != nil {
			return Shares{}, err
		}
		prof, err := readCPUProfile(name)
		if err != nil {
			return Shares{}, err
		}
		sums.add(prof, m)
	}
	return sums.shares(), nil
}
