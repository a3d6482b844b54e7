package dash

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// manyFuncs is a trace of n functions with signatures of about 1 KB, each
// called one to five times over ten seconds.
func manyFuncs(t *testing.T, n int) string {
	defs := make([]writer.ProbeDef, n)
	var recs []writer.Record
	long := strings.Repeat("VeryLongGenericTypeParameterName", 10)
	for i := range defs {
		name := fmt.Sprintf("F%d", i)
		defs[i] = writer.ProbeDef{ID: uint32(i + 1), Signature: fmt.Sprintf("example.com/some/deeply/nested/package/path%d.(*%s).%s(ctx context.Context, a map[string][]%s) (%s, error)", i%100, long, name, long, long),
			Package: fmt.Sprintf("example.com/some/deeply/nested/package/path%d", i%100), Name: name, File: "f.go", Line: i}
		for k := 0; k <= i%5; k++ {
			at := int64((i*7919+k*104729)%10_000_000) * 1000
			d := int64(1000 + (i*31+k*17)%5000*100)
			recs = append(recs, writer.Record{Probe: uint32(i + 1), Trace: uint64(len(recs) + 1), GID: 1, TIn: at, TOut: at + d})
		}
	}
	return writeTrace(t, defs, recs)
}

// TestPageBoundedManyFunctions: the page of a trace of 20,000 functions of
// long names stays under 2 MB, whatever the analyzer selects and whichever
// list is asked for: each group of the analyzer lists its 20 functions most
// of the criterion and links the others (the functions table filtered to
// the group), a selection lists 50, a cycle's changes 5 each way, the timeline the 30
// selected most often, the table at most 200 when asked for all. It served
// 323 MB (57 MB for this trace) when the groups listed every function.
func TestPageBoundedManyFunctions(t *testing.T) {
	const n, bound = 20000, 2 << 20
	path := manyFuncs(t, n)
	for _, criteria := range []string{settings.Default().Analysis.Criteria, "frequent", "most frequent ∪ most expensive"} {
		a := settings.Default().Analysis
		a.Criteria = criteria
		f, err := OpenFile(path, FileOptions{Analysis: a})
		if err != nil {
			t.Fatal(err)
		}
		srv := NewServer(f, &fakeAddr{}, Options{})
		get := func(u string) string {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, httptest.NewRequest("GET", u, nil))
			if rec.Code != 200 {
				t.Fatalf("%s: %d %s", u, rec.Code, rec.Body)
			}
			if rec.Body.Len() > bound {
				t.Errorf("%s, criteria %s: a page of %d bytes", u, criteria, rec.Body.Len())
			}
			return rec.Body.String()
		}
		page := get("/")
		v := f.View(context.Background(), Query{})
		last := v.Analyzer.Last
		if last == nil || len(last.Partitions) == 0 {
			t.Fatalf("%s: no evaluation: %+v", criteria, v.Analyzer)
		}
		t.Logf("criteria %s: page %d bytes, %d selected, %d timeline rows (+%d)", criteria, len(page), len(last.Selected), len(v.Analyzer.Timeline.Rows), v.Analyzer.Timeline.More)
		p := last.Partitions[0]
		li := 4
		for len(p.Members[li]) <= maxMembers {
			li--
		}
		members := p.Members[li]
		link := "/?" + url.Values{"group": {groupKey(p.Criterion, li)}}.Encode()
		if !strings.Contains(page, fmt.Sprintf(`and %s more</a>`, count(uint64(len(members)-maxMembers)))) || !strings.Contains(page, strings.ReplaceAll(link, "&", "&amp;")) {
			t.Errorf("%s: the group %s of %d functions is not linked (%s)", criteria, levelNames[li], len(members), link)
		}
		// The group's functions come most of the criterion first.
		if crit := p.Criterion; crit == "frequent" {
			first, lastRow := findRowIn(f, members[0]), findRowIn(f, members[len(members)-1])
			if first.Calls < lastRow.Calls {
				t.Errorf("%s: %s first with %d calls, %s last with %d", crit, members[0], first.Calls, members[len(members)-1], lastRow.Calls)
			}
		}
		grouped := get(link)
		gv := f.View(context.Background(), Query{Group: groupKey(p.Criterion, li)})
		if gv.Functions.Count != len(members) || !strings.Contains(grouped, `id="functions-group"`) {
			t.Errorf("%s: filtered to %s: %d functions, want %d", criteria, link, gv.Functions.Count, len(members))
		}
		all := get("/?all=1")
		if av := f.View(context.Background(), Query{All: true}); len(av.Functions.Rows) != maxAllRows || !strings.Contains(all, "The first 200 of 20,000 functions") {
			t.Errorf("all: %d rows", len(av.Functions.Rows))
		}
		if len(last.Selected) > maxListed && !strings.Contains(page, fmt.Sprintf("and %s more selected", count(uint64(len(last.Selected)-maxListed)))) {
			t.Errorf("%s: %d selected, not bounded", criteria, len(last.Selected))
		}
	}
}

func findRowIn(f *File, sig string) FuncRow {
	for i, fa := range f.agg.funcs {
		if fa.fn.Signature == sig {
			return f.row(i, fa)
		}
	}
	return FuncRow{}
}
