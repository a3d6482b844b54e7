package dash

import (
	"embed"
	"fmt"
	"html/template"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tigrisgo/tigris/internal/human"
	"github.com/tigrisgo/tigris/runtime/tracecontext"
	"github.com/tigrisgo/tigris/traceconv"
)

// assets are the page template, the style sheet, the script and the icon:
// compiled into the tigris command, never into the programs it monitors.
//
//go:embed assets
var assets embed.FS

// page is the page template, parsed on first use: every tigris command links the dashboard, and
// `tigris go` with nothing to instrument must start as fast as it can.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(funcs).ParseFS(assets, "assets/page.html"))
})

var funcs = template.FuncMap{
	"seconds": func(d time.Duration) int { return max(int(d.Round(time.Second)/time.Second), 1) },
	"dur":     elapsed,
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.Local().Format("15:04:05")
	},
	"count": anyCount,
	"ns": func(v float64) string {
		if v <= 0 {
			return "0"
		}
		return human.Ns(v)
	},
	"bytes": func(n any) string { return human.Bytes(toInt64(n)) },
	"short": shortName,
	"base": func(p string) string {
		if p == "" {
			return "–"
		}
		return filepath.Base(p)
	},
	"join":  func(s []string, sep string) string { return strings.Join(s, sep) },
	"modes": func() []string { return []string{"off", "coarse", "fine"} },
	"sortName": func(k string) string {
		return map[string]string{"total": "total time", "calls": "calls", "mean": "mean time", "p99": "p99 latency", "errors": "errors", "name": "name"}[k]
	},
	"sortLink": func(key, label string, v *View) template.HTML {
		if v.Functions.Sort == key {
			return template.HTML(template.HTMLEscapeString(label) + ` <span aria-hidden="true">▾</span><span class="visually-hidden">(sorted, largest first)</span>`)
		}
		q := v.Q
		q.Sort = key
		return template.HTML(fmt.Sprintf(`<a href="%s#functions">%s</a>`, template.HTMLEscapeString(queryURL(q)), template.HTMLEscapeString(label)))
	},
	"allLink": func(v *View) string { q := v.Q; q.All = true; return queryURL(q) + "#functions" },
	"groupLink": func(v *View, criterion string, li int) string {
		q := v.Q
		q.Group, q.All = groupKey(criterion, li), false
		return queryURL(q) + "#functions"
	},
	"ungroupLink": func(v *View) string { q := v.Q; q.Group = ""; return queryURL(q) + "#functions" },
	// first and more split a list the page bounds: its first n, and how
	// many it leaves out.
	"first":      func(n int, l []string) []string { return l[:min(n, len(l))] },
	"more":       func(n int, l []string) uint64 { return uint64(max(len(l)-n, 0)) },
	"maxMembers": func() int { return maxMembers },
	"maxListed":  func() int { return maxListed },
	"maxChanges": func() int { return maxChanges },
	"clip":       clip,
	"traceLink":  func(v *View, id uint64) string { q := v.Q; q.Trace, q.TraceID = id, ""; return queryURL(q) + "#traces" },
	"hist":       histogram,
	"spark":      sparkline,
	"partbar":    partitionBar,
	"timeline":   timelineGrid,
	"flame":      flameGraph,
	"hasMembers": func(p Partition) bool {
		for _, m := range p.Members {
			if len(m) > 0 {
				return true
			}
		}
		return false
	},
	"level":      func(i int) string { return levelNames[i] },
	"depthClass": func(d int) int { return min(d, 24) },
	"switchArgs": func(r FuncRow, c Controls) map[string]any { return map[string]any{"Row": r, "Controls": c} },
	"deleteArgs": func(r Rule, c Controls) map[string]any { return map[string]any{"Rule": r, "Controls": c} },
}

// elapsed writes how long a program has run, or a trace spans, in Go's
// duration style rounded to what a reader needs: under a minute as
// human.Duration does ("850ms", "45.4s"), then to the second ("12m37s"),
// from an hour on to the minute ("3h04m"). Never as a clock: 12:37 reads as
// a time of day.
func elapsed(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return human.Duration(d)
	case d < time.Hour-time.Second/2:
		s := int64(d.Round(time.Second) / time.Second)
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	m := int64(d.Round(time.Minute) / time.Minute)
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// anyCount is count for the page's integers of every type: each count the
// page writes is exact, with thousands separators.
func anyCount(n any) string {
	if v := toInt64(n); v < 0 {
		return "-" + count(uint64(-v))
	}
	if v, ok := n.(uint64); ok {
		return count(v)
	}
	return count(uint64(toInt64(n)))
}

// toInt64 converts the page's integers (int, int64, uint32, uint64) to
// int64; anything else is 0.
func toInt64(n any) int64 {
	switch v := n.(type) {
	case int:
		return int64(v)
	case int64:
		return v
	case uint32:
		return int64(v)
	case uint64:
		return int64(min(v, 1<<63-1))
	}
	return 0
}

// queryURL is the page's URL for q.
func queryURL(q Query) string {
	v := url.Values{}
	if q.Sort != "" && q.Sort != "total" {
		v.Set("sort", q.Sort)
	}
	if q.All {
		v.Set("all", "1")
	}
	if q.Trace != 0 {
		v.Set("trace", strconv.FormatUint(q.Trace, 10))
	} else if q.TraceID != "" {
		v.Set("trace", q.TraceID)
	}
	if q.Group != "" {
		v.Set("group", q.Group)
	}
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// parseQuery reads a Query from the page's URL; unknown values are ignored.
func parseQuery(v url.Values) Query {
	q := Query{Sort: v.Get("sort"), All: v.Get("all") == "1", Group: v.Get("group")}
	if _, ok := sortKeys[q.Sort]; !ok {
		q.Sort = ""
	}
	t := v.Get("trace")
	q.Trace, _ = strconv.ParseUint(t, 10, 64)
	if id, err := traceconv.ParseTraceID(strings.ToLower(t)); err == nil && q.Trace == 0 {
		q.TraceID = tracecontext.FormatTraceID(id)
	}
	return q
}
