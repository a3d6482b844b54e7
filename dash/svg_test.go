package dash

import (
	"regexp"
	"strings"
	"testing"
)

func TestFlameGraph(t *testing.T) {
	d := &TraceDetail{TraceRow: TraceRow{ID: 7, DurNs: 1000}, Nodes: []TraceNode{
		{Signature: "a.Root()", Parent: -1, DurNs: 1000, SelfNs: 200},
		{Signature: "a.Child()", Depth: 1, Parent: 0, StartNs: 100, DurNs: 800, SelfNs: 800, Error: true},
		{Signature: "a.Child()", Depth: 1, Parent: 0, StartNs: 950, DurNs: 1, SelfNs: 1, Missing: 2},
	}}
	svg := string(flameGraph(d))
	classes := regexp.MustCompile(`<rect class="(f\d)[^"]*"`).FindAllStringSubmatch(svg, -1)
	if len(classes) != 3 || classes[0][1] == classes[1][1] {
		t.Errorf("rects %v: want three, the child's colour not its caller's", classes)
	}
	for _, want := range []string{"<title>a.Child()\n800ns, self 800ns, returned an error</title>", "2 unrecorded call level(s) above", `class="f`, `role="img"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the flame graph lacks %q:\n%s", want, svg)
		}
	}
	if strings.Count(svg, "<text") != 2 {
		t.Errorf("labels: want the two wide calls labelled, not the 1ns one:\n%s", svg)
	}
	if flameGraph(nil) != "" || flameGraph(&TraceDetail{}) != "" {
		t.Error("a flame graph of nothing")
	}
}

func TestChartsOfNothing(t *testing.T) {
	for name, got := range map[string]string{
		"sparkline": string(sparkline(nil, nil, "calls")),
		"histogram": string(histogram(nil)),
	} {
		if !strings.Contains(got, `class="muted"`) || strings.Contains(got, "<svg") {
			t.Errorf("%s of nothing: %s", name, got)
		}
	}
	if got := string(partitionBar(Partition{Criterion: "frequent"})); !strings.Contains(got, "no value grouped") {
		t.Errorf("partition bar of nothing: %s", got)
	}
}
