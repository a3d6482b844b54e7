package monitor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tigrisgo/tigris/runtime/settings"
	"github.com/tigrisgo/tigris/runtime/writer"
)

// ensureWriterLocked opens the configured writer the first time a probe is in
// fine mode, so a program that never traces in detail leaves no file behind. A
// sink set with SetSink wins. Called with registry.mu held, off the hot path.
func ensureWriterLocked() {
	if registry.sinkChosen {
		return
	}
	registry.sinkChosen = true
	sink.Store(newSinkBox(openOutput(registry.cfg.Writer)))
}

// openOutput is openWriter that never fails: when the writer cannot be
// created, the error is reported and the output discards and counts.
func openOutput(wc settings.Writer) writer.Output {
	out, err := openWriter(wc)
	if err != nil {
		report(fmt.Errorf("writer: %v; fine records are discarded and counted as dropped", err))
		return &unopened{err: err}
	}
	return out
}

// unopened is the output when the configured writer could not be created (a
// directory without write permission, say): records are discarded, and counted
// as dropped so that the writer state shows what was lost.
type unopened struct {
	discarded writer.Null
	err       error
}

func (u *unopened) Define(writer.ProbeDef) {}
func (u *unopened) Write(r *writer.Record) { u.discarded.Write(r) }
func (u *unopened) Flush() error           { return u.err }
func (u *unopened) Close() error           { return u.err }

func (u *unopened) Stats() writer.Stats {
	return writer.Stats{Dropped: u.discarded.Stats().Written, Errors: 1}
}

// openWriter creates the writer the configuration asks for.
func openWriter(wc settings.Writer) (writer.Output, error) {
	var out writer.Output
	switch wc.Mode {
	case settings.WriterNull:
		out = &writer.Null{}
	case settings.WriterSync, settings.WriterAsync, "":
		path := expandPath(wc.Path, time.Now())
		opts := writer.Options{
			Path:          path,
			QueueSize:     wc.Queue,
			RotateBytes:   wc.Rotate,
			FlushInterval: time.Duration(wc.Flush),
			OnError:       report,
			TickTimes:     true,
			OnClose:       func(st writer.Stats) { reportLosses(st, path) },
		}
		if wc.OnFull == settings.Drop {
			opts.OnFull = writer.Drop
		}
		var err error
		if wc.Mode == settings.WriterSync {
			out, err = writer.NewSync(opts)
		} else {
			out, err = writer.NewAsync(opts)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown writer mode %q", wc.Mode)
	}
	return out, nil
}

// reportLosses is the writer's OnClose: the one line a program prints at
// exit when fine records were lost, with the causes. It bypasses report's
// rate limit: an error reported a moment before exit must not hide it.
func reportLosses(st writer.Stats, path string) {
	if msg := lossLine(st, path); msg != "" {
		fmt.Fprintf(os.Stderr, "tigris: %s\n", msg)
	}
}

// lossLine says how many of the records handed to the writer were lost and
// why, or "" when none were.
func lossLine(st writer.Stats, path string) string {
	if st.Dropped == 0 {
		return ""
	}
	var why []string
	if st.QueueFull > 0 {
		why = append(why, fmt.Sprintf("%d to a full queue (writer.on-full: drop)", st.QueueFull))
	}
	if errs := st.Dropped - st.QueueFull - st.Late; errs > 0 {
		why = append(why, fmt.Sprintf("%d to write errors", errs))
	}
	if st.Late > 0 {
		why = append(why, fmt.Sprintf("%d written after the writer closed", st.Late))
	}
	return fmt.Sprintf("%d of %d fine records lost (%s): %s", st.Dropped, st.Written+st.Dropped+st.Queued, path, strings.Join(why, ", "))
}

// expandPath fills {binary}, {pid} and {time} in a writer path pattern.
func expandPath(pattern string, now time.Time) string {
	bin := "tigris"
	if exe, err := os.Executable(); err == nil {
		bin = strings.TrimSuffix(filepath.Base(exe), ".exe")
	}
	return strings.NewReplacer(
		"{binary}", bin,
		"{pid}", strconv.Itoa(os.Getpid()),
		"{time}", now.UTC().Format("20060102T150405Z"),
	).Replace(pattern)
}

// WriterStats reports the writer's counters; ok is false when there is no writer.
func WriterStats() (s writer.Stats, ok bool) {
	if o, isOut := currentSink().(writer.Output); isOut {
		return o.Stats(), true
	}
	return writer.Stats{}, false
}
