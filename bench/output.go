package bench

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes s as indented JSON.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadJSON reads a Summary written by WriteJSON.
func ReadJSON(r io.Reader) (*Summary, error) {
	var s Summary
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("reading summary: %w", err)
	}
	return &s, nil
}

// rawCSVHeader is the header line of WriteRawCSV.
var rawCSVHeader = []string{"experiment", "config", "run", "goroutine", "call", "warmup", "ns"}

// WriteRawCSV writes every measurement of runs, warm-up included, one line each:
//
//	experiment,config,run,goroutine,call,warmup,ns
//	mt0,baseline,1,0,0,1,412
//
// call counts from 0 within a goroutine; warmup is 1 for the calls the
// experiment's warm-up share discards (warmup is that share) and 0 otherwise.
// Timings are loaded from the raw data files one run at a time.
func WriteRawCSV(w io.Writer, res *Results) error {
	warmup := map[string]float64{}
	for _, e := range res.Plan.Experiments {
		warmup[e.Name] = e.Params.Warmup
	}
	runs := res.Runs
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(strings.Join(rawCSVHeader, ",") + "\n")
	var line []byte
	for i := range runs {
		r := &runs[i]
		loaded := r.Timings == nil
		if err := r.Load(); err != nil {
			return err
		}
		skip := WarmupCalls(r.Calls, warmup[r.Experiment])
		prefix := r.Experiment + "," + r.Variant + "," + strconv.Itoa(r.Run) + ","
		for g := 0; g < r.Goroutines; g++ {
			for c := 0; c < r.Calls; c++ {
				line = append(line[:0], prefix...)
				line = strconv.AppendInt(line, int64(g), 10)
				line = append(line, ',')
				line = strconv.AppendInt(line, int64(c), 10)
				if c < skip {
					line = append(line, ",1,"...)
				} else {
					line = append(line, ",0,"...)
				}
				line = strconv.AppendInt(line, r.Timings[g*r.Calls+c], 10)
				line = append(line, '\n')
				bw.Write(line)
			}
		}
		if loaded {
			r.Timings = nil
		}
	}
	return bw.Flush()
}

// ReadRawCSV reads what WriteRawCSV wrote back into runs with their timings
// loaded: the experiment, configuration, run number, goroutines, calls and
// timings; everything else in RunData is zero. Runs are returned in the order
// they first appear; every run must list the same number of calls for each of
// its goroutines.
func ReadRawCSV(r io.Reader) ([]RunData, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<20))
	cr.ReuseRecord = true
	cr.FieldsPerRecord = len(rawCSVHeader)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading raw CSV: %w", err)
	}
	if strings.Join(head, ",") != strings.Join(rawCSVHeader, ",") {
		return nil, fmt.Errorf("reading raw CSV: header %q, want %q", strings.Join(head, ","), strings.Join(rawCSVHeader, ","))
	}
	type key struct {
		exp, cfg string
		run      int
	}
	index := map[key]int{}
	var runs []RunData
	var perG [][][]int64 // per run, per goroutine
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading raw CSV: %w", err)
		}
		line, _ := cr.FieldPos(0)
		var nums [4]int64 // run, goroutine, call, ns
		for i, f := range []int{2, 3, 4, 6} {
			nums[i], err = strconv.ParseInt(rec[f], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("reading raw CSV: line %d: %s: %w", line, rawCSVHeader[f], err)
			}
		}
		k := key{rec[0], rec[1], int(nums[0])}
		i, ok := index[k]
		if !ok {
			i = len(runs)
			index[k] = i
			runs = append(runs, RunData{Experiment: k.exp, Variant: k.cfg, Run: k.run})
			perG = append(perG, nil)
		}
		g, c := nums[1], nums[2]
		if g < 0 || g > int64(len(perG[i])) {
			return nil, fmt.Errorf("reading raw CSV: line %d: goroutine %d out of order", line, g)
		}
		if g == int64(len(perG[i])) {
			perG[i] = append(perG[i], nil)
		}
		if c != int64(len(perG[i][g])) {
			return nil, fmt.Errorf("reading raw CSV: line %d: call %d out of order (want %d)", line, c, len(perG[i][g]))
		}
		perG[i][g] = append(perG[i][g], nums[3])
	}
	for i := range runs {
		r := &runs[i]
		r.Goroutines = len(perG[i])
		r.Calls = len(perG[i][0])
		r.Timings = make([]int64, 0, r.Goroutines*r.Calls)
		for g, ts := range perG[i] {
			if len(ts) != r.Calls {
				return nil, fmt.Errorf("reading raw CSV: %s run %d of %s: goroutine %d has %d calls, goroutine 0 %d",
					r.Variant, r.Run, r.Experiment, g, len(ts), r.Calls)
			}
			r.Timings = append(r.Timings, ts...)
		}
	}
	return runs, nil
}

// WriteTable writes s for a terminal: per experiment, the response times per
// top-level call as in the thesis' Table 11.1, then the portions and overheads
// per monitored call.
func WriteTable(w io.Writer, s *Summary) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "MooBench plan %q — %s %s/%s, %d CPU(s) %s, load %.1f at start\n",
		s.Plan, s.Env.GoVersion, s.Env.GOOS, s.Env.GOARCH, s.Env.NumCPU, s.Env.CPU, s.Env.LoadAvg)
	if s.Env.NumCPU > 0 && s.MaxLoadAvg > float64(s.Env.NumCPU) {
		fmt.Fprintf(bw, "WARNING: load average up to %.1f on %d CPU(s): the machine was not idle; means, confidence intervals and maxima mostly measure preemption, medians less so\n",
			s.MaxLoadAvg, s.Env.NumCPU)
	}
	for _, e := range s.Experiments {
		q := e.Params
		fmt.Fprintf(bw, "\n== %s: depth %d, method time %v, %d run(s) × %d call(s) × %d goroutine(s), first %.0f%% of each run discarded; clock pair %.2f ns\n",
			e.Name, q.Depth, q.MethodTime, q.Runs, q.Calls, q.Goroutines, 100*q.Warmup, e.ClockPairNs)
		fmt.Fprintf(bw, "\nResponse time per top-level call (%d monitored calls), all runs pooled:\n", q.Depth)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "config\tadds\tmean\t± 95% CI\tQ1\tmedian\tQ3\tmin\tmax\tn\truns' means\t")
		for _, c := range e.Configs {
			st := c.Stats
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", c.Name, c.Adds,
				fmtNs(st.Mean), fmtNs(st.CI95), fmtNs(st.Q1), fmtNs(st.Median), fmtNs(st.Q3),
				fmtNs(float64(st.Min)), fmtNs(float64(st.Max)), st.N, spread(c.RunMeans))
		}
		tw.Flush()
		fmt.Fprintf(bw, "\nPer monitored call (÷ %d); ×cp = multiples of the clock pair (%.2f ns); vs a peer = how many times cheaper the overhead is than the peer's (medians; the means are in summary.json):\n",
			q.Depth, e.ClockPairNs)
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "config\tportion\tover\tmean\t± 95% CI\t×cp\tmedian\t×cp\toverhead mean\t×cp\toverhead median\t×cp\t"
		for _, p := range e.Peers {
			head += "vs " + p + "\t"
		}
		fmt.Fprintln(tw, head)
		for _, c := range e.Configs {
			if c.Adds == PortionT {
				fmt.Fprintf(tw, "%s\tT\t\t%s\t\t%s\t%s\t%s\t\t\t\t\t%s\n", c.Name,
					fmtNs(c.Stats.Mean/float64(q.Depth)), ratio(c.Stats.Mean/float64(q.Depth)/e.ClockPairNs),
					fmtNs(c.Stats.Median/float64(q.Depth)), ratio(c.Stats.Median/float64(q.Depth)/e.ClockPairNs),
					strings.Repeat("\t", len(e.Peers)))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", c.Name, c.Adds, c.Over,
				fmtNs(c.Portion.Mean), fmtNs(c.Portion.CI95), ratio(c.Portion.MeanClockPairs),
				fmtNs(c.Portion.Median), ratio(c.Portion.MedianClockPairs),
				fmtNs(c.Overhead.Mean), ratio(c.Overhead.MeanClockPairs),
				fmtNs(c.Overhead.Median), ratio(c.Overhead.MedianClockPairs))
			for _, p := range e.Peers {
				fmt.Fprintf(tw, "%s\t", cheaper(c.VsPeers, p))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintf(bw, "\nOutput, throughput and allocations (every run, warm-up included; throughput of all goroutines; CPU and allocations of the whole process per monitored call):\n")
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "config\trecords or spans\twritten\tlost\tlost %\tunaccounted\tfile MB/run\tM calls/s\tCPU/call\tallocs/call\tbytes/call\t")
		for _, c := range e.Configs {
			var exp, written, lost, share, unacc string
			if t := c.Trace; t != nil {
				exp, written, lost = strconv.FormatInt(t.Expected, 10), strconv.FormatInt(t.Written, 10), strconv.FormatInt(t.Lost, 10)
				share = fmt.Sprintf("%.2f", 100*t.LostShare())
				unacc = strconv.FormatInt(t.Unaccounted(), 10)
			} else if c.Name == ExecTrace {
				written, lost = "not counted", "none¹"
			}
			var file, rate, cpu string
			if c.OutBytes > 0 {
				file = fmt.Sprintf("%.1f", float64(c.OutBytes)/1e6)
			}
			if c.CallsPerSec > 0 {
				rate = fmt.Sprintf("%.2f", c.CallsPerSec/1e6)
			}
			if c.CPUPerCall > 0 {
				cpu = fmtNs(c.CPUPerCall)
			}
			allocs, bytes := "?", "?"
			if c.AllocsPerCall >= 0 {
				allocs, bytes = fmt.Sprintf("%.3f", c.AllocsPerCall), fmt.Sprintf("%.1f", c.AllocBytesPerCall)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, exp, written, lost, share, unacc, file, rate, cpu, allocs, bytes)
		}
		tw.Flush()
		if e.Config(ExecTrace) != nil {
			fmt.Fprintln(bw, "¹ The execution tracer does not drop events (when its writer falls behind, its buffers grow); its regions are not counted per run: go tool trace -d=parsed takes about 50 s per million.")
		}
		for _, c := range e.Configs {
			for _, n := range c.Notes {
				fmt.Fprintf(bw, "%s: %s\n", c.Name, n)
			}
		}
		if len(e.Targets) > 0 {
			fmt.Fprintf(bw, "\nTargets (docs/performance.md; medians unless said otherwise):\n")
			tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
			for _, t := range e.Targets {
				verdict := "missed"
				if t.Met {
					verdict = "met"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Name, t.Target, t.Measured, verdict)
			}
			tw.Flush()
		}
	}
	writeScaling(bw, s.Scaling)
	writeKieker(bw, s.Kieker)
	return bw.Flush()
}

// writeScaling writes the goroutine series, if there is one.
func writeScaling(bw *bufio.Writer, sc *Scaling) {
	if sc == nil {
		return
	}
	fmt.Fprintf(bw, "\n== Goroutine series (%s): per monitored call, by benchmark goroutines\n", strings.Join(sc.Experiments, ", "))
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "config\tmeasure\t"
	for _, g := range sc.Goroutines {
		head += fmt.Sprintf("%d goroutine(s)\t", g)
	}
	fmt.Fprintln(tw, head)
	row := func(config, measure string, xs []float64, f func(float64) string) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(tw, "%s\t%s\t", config, measure)
		for _, x := range xs {
			fmt.Fprintf(tw, "%s\t", f(x))
		}
		fmt.Fprintln(tw)
	}
	for _, r := range sc.Rows {
		row(r.Config, "overhead (median)", r.OverheadMedian, fmtNs)
		row("", "portion (median)", r.PortionMedian, fmtNs)
		row("", "portion CPU", r.PortionCPU, func(x float64) string {
			if x == 0 {
				return ""
			}
			return fmtNs(x)
		})
		row("", "M calls/s", r.CallsPerSec, func(x float64) string { return fmt.Sprintf("%.2f", x/1e6) })
		row("", "lost %", r.LostShare, func(x float64) string { return fmt.Sprintf("%.2f", 100*x) })
	}
	tw.Flush()
	fmt.Fprintln(bw, "portion CPU: the process' CPU time per monitored call over the configuration it stacks on (writer goroutine and assists included).")
}

// writeKieker writes Kieker's published figures.
func writeKieker(bw *bufio.Writer, ks []KiekerFigure) {
	if len(ks) == 0 {
		return
	}
	fmt.Fprintln(bw, "\n== Kieker's published MooBench figures, per monitored call (depth 10, method time 0; for scale, not a contest):")
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for _, k := range ks {
		med := ""
		if k.Median > 0 {
			med = "median " + fmtNs(k.Median)
		}
		fmt.Fprintf(tw, "  %s\t%s\tmean %s\t%s\t%s\n", k.Portion, k.What, fmtNs(k.Mean), med, k.Source)
	}
	tw.Flush()
}

// cheaper formats the share of peer in vs as how many times cheaper the
// overhead is; nothing when there is none.
func cheaper(vs []PeerShare, peer string) string {
	for _, v := range vs {
		if v.Peer == peer && v.Median != 0 {
			if v.Median > 0 {
				return ratio(1/v.Median) + " cheaper"
			}
			return fmt.Sprintf("%.3f", v.Median)
		}
	}
	return ""
}

// fmtNs formats a duration in ns with a unit that keeps three or four
// significant digits.
func fmtNs(ns float64) string {
	a := math.Abs(ns)
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0):
		return fmt.Sprint(ns)
	case a >= 1e9:
		return fmt.Sprintf("%.3f s", ns/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3f ms", ns/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f ns", ns)
	case a >= 10:
		return fmt.Sprintf("%.1f ns", ns)
	default:
		return fmt.Sprintf("%.2f ns", ns)
	}
}

// vsPeer formats a share of the peer's overhead with how many times cheaper
// that is; nothing for the peer itself.
func vsPeer(share float64, isPeer bool) string {
	if share == 0 || isPeer {
		return ""
	}
	if share > 0 {
		return fmt.Sprintf("%.3f (%s cheaper)", share, ratio(1/share))
	}
	return fmt.Sprintf("%.3f", share)
}

func ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return ""
	}
	if math.Abs(x) >= 100 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

// spread shows the range of the runs' means.
func spread(means []float64) string {
	if len(means) == 0 {
		return ""
	}
	lo, hi := means[0], means[0]
	for _, m := range means {
		lo, hi = min(lo, m), max(hi, m)
	}
	return fmtNs(lo) + " – " + fmtNs(hi)
}

// Report writes the analysis of res into dir: results.json (res itself, to
// summarize again later with ReadResults), summary.json, table.txt, one
// chart-<experiment>.svg per experiment and, if rawCSV, raw.csv.gz with every
// measurement. It returns the summary.
func Report(dir string, res *Results, rawCSV bool) (*Summary, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "results.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}); err != nil {
		return nil, err
	}
	s, err := Summarize(res)
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "summary.json"), func(w io.Writer) error { return WriteJSON(w, s) }); err != nil {
		return s, err
	}
	if err := writeFile(filepath.Join(dir, "table.txt"), func(w io.Writer) error { return WriteTable(w, s) }); err != nil {
		return s, err
	}
	for i := range s.Experiments {
		e := &s.Experiments[i]
		if err := writeFile(filepath.Join(dir, "chart-"+e.Name+".svg"), func(w io.Writer) error { return WriteSVG(w, e) }); err != nil {
			return s, err
		}
	}
	if rawCSV {
		err := writeFile(filepath.Join(dir, "raw.csv.gz"), func(w io.Writer) error {
			zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
			if err != nil {
				return err
			}
			if err := WriteRawCSV(zw, res); err != nil {
				return err
			}
			return zw.Close()
		})
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// ReadResults reads the results.json that Report wrote. The plan's build
// functions are not in it; everything Summarize needs is. A run's raw data file
// that is no longer where the driver wrote it (the results directory was moved
// or copied) is looked for under raw/ next to path.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var res Results
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&res); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	for i := range res.Runs {
		r := &res.Runs[i]
		if _, err := os.Stat(r.File); err == nil {
			continue
		}
		moved := filepath.Join(filepath.Dir(path), "raw", runName(r.Experiment, r.Variant, r.Run)+".bin")
		if _, err := os.Stat(moved); err == nil {
			r.File = moved
		}
	}
	return &res, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
