package queryout

import (
	"fmt"

	"github.com/tigrisgo/tigris/adminclient"
)

// PrintEvent prints one event of a running program's result stream
// (adminclient.Client.Query) to out. A table learns when the query started
// and ended, to mark the windows it saw only part of.
func PrintEvent(out Printer, ev adminclient.QueryEvent) error {
	if t, ok := out.(*Table); ok {
		switch {
		case ev.Head != nil:
			t.Started = ev.Head.Started
		case ev.End != "":
			t.Ended = ev.Ended
		}
	}
	switch {
	case ev.Schema != nil:
		return out.Schema(ev.Schema.Index, ev.Schema.Schema)
	case ev.Row != nil:
		return out.Row(ev.Row.Schema, ev.Row.Vals)
	case ev.Skipped > 0:
		return out.Note(fmt.Sprintf("%d rows skipped: this reader fell behind", ev.Skipped))
	case ev.Dropped != nil:
		return out.Note(LeftOut(ev.Dropped))
	case ev.End != "":
		return out.End(ev.End, ev.Stats)
	}
	return nil
}
