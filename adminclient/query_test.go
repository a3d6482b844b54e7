package adminclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	rq "github.com/tigrisgo/tigris/runtime/query"
)

// FuzzStreamDecoder: any line decodes to an event or an error, without
// panicking, with allocation bounded by the line's size.
func FuzzStreamDecoder(f *testing.F) {
	for _, s := range []string{
		`{"query":{"id":1,"kind":"select","columns":[{"name":"n","type":"int"}]}}`,
		`{"schema":1,"name":"actions","columns":[{"name":"t","type":"time"},{"name":"d","type":"duration"}]}`,
		`{"row":[1]}`, `{"row":["2026-11-25T12:00:00Z",5],"schema":1}`, `{"skipped":3}`,
		`{"stats":{"rows":2}}`, `{"end":"cancelled","stats":{"rows":2}}`, `{"dropped":{"since":"2026-11-25T12:00:00Z","why":"w"}}`, `{"dropped":{"from":"2026-11-25T12:00:00Z","to":"2026-11-25T12:00:10Z","shed":818}}`, `{"row":[null]}`, `{}`, `[`, `{"schema":-1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		d := &StreamDecoder{}
		d.Decode([]byte(`{"query":{"id":1,"kind":"select","columns":[{"name":"n","type":"int"},{"name":"s","type":"string"}]}}`))
		ev, err := d.Decode([]byte(line))
		runtime.ReadMemStats(&m1)
		if got, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(64<<10+64*len(line)); got > limit {
			t.Errorf("%d bytes allocated for a line of %d", got, len(line))
		}
		if err == nil && ev.Row != nil {
			s := d.schemas[ev.Row.Schema]
			if len(ev.Row.Vals) != len(s.Columns) {
				t.Fatalf("row of %d values for %d columns", len(ev.Row.Vals), len(s.Columns))
			}
		}
	})
}

// The client streams what the server writes and decodes every value by its
// column's type.
func TestQueryStream(t *testing.T) {
	srv := httptest.NewServer(admin.NewHandler(admin.Options{}))
	defer srv.Close()
	c := newClient(t, srv.URL, Options{})
	_, err := c.Explain(context.Background(), "SELECT nope FROM calls")
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Error(), "SELECT nope FROM calls\n           ^") {
		t.Fatalf("explain error: %v", err)
	}
	var lines bytes.Buffer
	for _, l := range []string{
		`{"query":{"id":7,"kind":"select","columns":[{"name":"t","type":"time"},{"name":"d","type":"duration"},{"name":"f","type":"float"},{"name":"b","type":"bool"}]}}`,
		`{"row":["2026-11-25T12:00:00.5Z",1500,0.25,true]}`,
		`{"end":"cancelled","ended":"2026-11-25T12:00:01.25Z","stats":{"rows":1}}`,
	} {
		lines.WriteString(l + "\n")
	}
	d := &StreamDecoder{}
	sc := bufio.NewScanner(&lines)
	var got []string
	for sc.Scan() {
		ev, err := d.Decode(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if ev.End != "" && !ev.Ended.Equal(time.Date(2026, 11, 25, 12, 0, 1, 250e6, time.UTC)) {
			t.Errorf("the end line's time decoded as %v", ev.Ended)
		}
		if ev.Row != nil {
			for _, v := range ev.Row.Vals {
				got = append(got, v.T.String()+"="+v.String())
			}
		}
	}
	if want := "time=2026-11-25T12:00:00.500Z duration=1.5µs float=0.25 bool=true"; strings.Join(got, " ") != want {
		t.Fatalf("decoded %v, want %s", got, want)
	}
	if v, err := DecodeValue(rq.Int, []byte(`"x"`)); err == nil {
		t.Fatalf("a string decoded as an int: %v", v)
	}
}

// TestDecodeDropped: what a query left out decodes as a Dropped event, its
// start and its counts.
func TestDecodeDropped(t *testing.T) {
	var d StreamDecoder
	ev, err := d.Decode([]byte(`{"dropped":{"since":"2026-11-25T12:00:03Z","why":"taking one call in 4"}}`))
	if err != nil || ev.Dropped == nil || ev.Dropped.Since == nil || ev.Dropped.Why != "taking one call in 4" || ev.Stats != nil {
		t.Fatalf("%+v %v", ev, err)
	}
	ev, err = d.Decode([]byte(`{"dropped":{"from":"2026-11-25T12:00:00Z","to":"2026-11-25T12:00:10Z","shed":818,"lost":3}}`))
	if err != nil || ev.Dropped == nil || ev.Dropped.Shed != 818 || ev.Dropped.Lost != 3 || ev.Dropped.To.Sub(*ev.Dropped.From) != 10*time.Second {
		t.Fatalf("%+v %v", ev, err)
	}
}
