package bench

// KiekerFigure is one of Kieker's published MooBench results, for context:
// the same benchmark at the same stress point (depth 10, method time 0),
// a decade earlier, on other hardware and another runtime. They are given for
// scale, not as a contest, and are never part of a verdict.
type KiekerFigure struct {
	Portion string  `json:"portion"` // T, I, C, W
	What    string  `json:"what"`
	Mean    float64 `json:"meanNs"`   // per monitored call
	Median  float64 `json:"medianNs"` // per monitored call; 0: not published
	Source  string  `json:"source"`
}

// kiekerFigures come from the MooBench thesis (J. Waller, Performance
// Benchmarking of Application Monitoring Frameworks, 2014), Table 11.1:
// Kieker 1.9 on Java 7, Solaris 10, Intel Xeon E5540, an asynchronous ASCII
// writer with a blocking queue. The table gives µs per top-level call of 10
// monitored calls (no instrumentation 0.83, deactivated 1.35, collecting 9.90,
// writing 34.62 mean / 12.25 median); the portions per monitored call below
// are its differences divided by 10. The tuned ExplorViz variant (thesis,
// ch. 11) reached C ≈ 570 ns and W ≈ 20 ns.
var kiekerFigures = []KiekerFigure{
	{Portion: "T", What: "no instrumentation", Mean: 83, Median: 83, Source: "Kieker 1.9, thesis Table 11.1"},
	{Portion: "I", What: "deactivated probe", Mean: 52, Median: 47, Source: "Kieker 1.9, thesis Table 11.1"},
	{Portion: "C", What: "collecting (record built, not written)", Mean: 855, Median: 853, Source: "Kieker 1.9, thesis Table 11.1"},
	{Portion: "W", What: "writing (async ASCII writer, blocking queue: nothing lost)", Mean: 2472, Median: 242, Source: "Kieker 1.9, thesis Table 11.1"},
	{Portion: "C", What: "collecting, tuned (ExplorViz)", Mean: 570, Source: "thesis ch. 11"},
	{Portion: "W", What: "writing, tuned (ExplorViz)", Mean: 20, Source: "thesis ch. 11"},
}
