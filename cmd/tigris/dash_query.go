package main

import (
	"bytes"
	"context"
	"os"
	"time"

	"github.com/tigrisgo/tigris/adminclient"
	"github.com/tigrisgo/tigris/dash"
	"github.com/tigrisgo/tigris/queryout"
	"github.com/tigrisgo/tigris/tracequery"
)

// dashQueries is the dashboard's query box: queries run on the program
// (through its admin endpoint, cancelled when the page stops reading) or
// over the trace file (each within maxCPU of CPU time), printed as tables, a
// line at a time.
func dashQueries(target, token string, maxCPU time.Duration) dash.QueryRunner {
	if fi, err := os.Stat(target); err == nil && !fi.IsDir() {
		return dash.QueryFunc(func(ctx context.Context, text string, rows func([]byte) error) error {
			w := &lines{emit: rows}
			_, err := tracequery.Run(ctx, []string{target}, text, tracequery.Options{MaxCPU: maxCPU}, &queryout.Table{W: w, Buffered: true})
			w.flush()
			return queryError(err)
		})
	}
	return dash.QueryFunc(func(ctx context.Context, text string, rows func([]byte) error) error {
		c, err := adminclient.New(target, adminclient.Options{Token: token})
		if err != nil {
			return err
		}
		w := &lines{emit: rows}
		out := &queryout.Table{W: w}
		err = c.Query(ctx, text, func(ev adminclient.QueryEvent) error { return queryout.PrintEvent(out, ev) })
		w.flush()
		return err
	})
}

// lines hands what is written to emit a line at a time.
type lines struct {
	emit func([]byte) error
	buf  []byte
	err  error
}

func (l *lines) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for l.err == nil {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.err = l.emit(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
	return len(p), l.err
}

func (l *lines) flush() {
	if len(l.buf) > 0 && l.err == nil {
		l.err = l.emit(l.buf)
		l.buf = nil
	}
}
