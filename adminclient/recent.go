package adminclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/tigrisgo/tigris/runtime/monitor"
	"github.com/tigrisgo/tigris/runtime/monitor/admin"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// Auth asks whether the client's changes would be accepted; it changes
// nothing. A program that has a token and was not given it (or a wrong one)
// answers with an *Error of Status 401.
func (c *Client) Auth(ctx context.Context) (*admin.AuthState, error) {
	return call[admin.AuthState](ctx, c, "POST", admin.Prefix+"auth", nil, "")
}

// Recent returns the program's recent fine records as a trace stream: the
// current trace file's header and its last chunks within maxBytes (0: the
// program's default), from GET writer/recent. Probes first recorded after
// the file started are defined only in the part of the file left out, so
// Recent completes their definitions from GET probes: the stream then names
// every function, as the whole file would. It is what `tigris ctl writer
// recent` writes and what tigris dash shows as recent traces.
func (c *Client) Recent(ctx context.Context, maxBytes int) ([]byte, error) {
	path := admin.Prefix + "writer/recent"
	if maxBytes > 0 {
		path += "?bytes=" + strconv.Itoa(maxBytes)
	}
	data, err := c.do(ctx, "GET", path, nil, nil, "")
	if err != nil {
		return nil, err
	}
	missing, err := undefinedProbes(data)
	if err != nil || len(missing) == 0 {
		return data, err
	}
	pl, err := c.Probes(ctx, Filter{})
	if err != nil {
		return nil, err
	}
	return Define(data, pl.Probes)
}

// undefinedProbes lists the probes that records of a trace stream name
// without a definition before them.
func undefinedProbes(data []byte) (map[uint32]bool, error) {
	r := writer.NewReader(bytes.NewReader(data))
	defined, missing := map[uint32]bool{}, map[uint32]bool{}
	for {
		it, err := r.Next()
		if err == io.EOF {
			return missing, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the recent records: %w", err)
		}
		switch it.Kind {
		case writer.KindProbe:
			defined[it.Probe.ID] = true
		case writer.KindRecord:
			if !defined[it.Record.Probe] {
				missing[it.Record.Probe] = true
			}
		}
	}
}

// Define rewrites a trace stream with a definition, taken from probes, of
// every probe whose records it holds without one; definitions the stream has
// stay. The stream's first header is kept (its clock base gives the records
// their wall time); loss items and any later headers are dropped, so it suits
// one process's recent records, not whole files. Re-encoding goes through a
// temporary file, the writer's only output.
func Define(data []byte, probes []monitor.ProbeStatus) ([]byte, error) {
	byID := make(map[uint32]monitor.ProbeStatus, len(probes))
	for _, p := range probes {
		byID[p.ID] = p
	}
	r := writer.NewReader(bytes.NewReader(data))
	var (
		hdr     *writer.Header
		defs    = map[uint32]bool{}
		records []writer.Record
		order   []writer.ProbeDef // definitions in stream order, completed ones before their first record
	)
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the recent records: %w", err)
		}
		switch it.Kind {
		case writer.KindHeader:
			if hdr == nil {
				hdr = it.Header
			}
		case writer.KindProbe:
			defs[it.Probe.ID] = true
			order = append(order, *it.Probe)
		case writer.KindRecord:
			id := it.Record.Probe
			if p, ok := byID[id]; ok && !defs[id] {
				defs[id] = true
				order = append(order, writer.ProbeDef{ID: id, Signature: p.Signature, File: p.File, Line: p.Line})
			}
			records = append(records, it.Record)
		}
	}
	if hdr == nil {
		return nil, errors.New("the recent records have no header")
	}
	f, err := os.CreateTemp("", "tigris-recent-*.tgr")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	w, err := writer.NewSync(writer.Options{Path: path, Host: hdr.Host, PID: hdr.PID, Binary: hdr.Binary, Clock: hdr.Clock})
	if err != nil {
		return nil, err
	}
	for _, d := range order {
		w.Define(d)
	}
	for i := range records {
		w.Write(&records[i])
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("re-encoding the recent records: %w", err)
	}
	return os.ReadFile(path)
}
