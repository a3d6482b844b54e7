package offline

import (
	"errors"
	"io/fs"
	"maps"
	"os"

	"github.com/tigrisgo/tigris/config"
	"github.com/tigrisgo/tigris/runtime/settings"
)

// Options choose the filter and the bindings the analysis evaluates. The zero
// value takes them from the tigris.yaml found upward from the current
// directory, or the defaults when there is none.
type Options struct {
	// Config is the tigris.yaml to take the analysis settings from; "" finds
	// one upward from the current directory.
	Config string
	// Criteria, when not nil, is the TigrisDSL filter instead of the file's.
	Criteria *string
	// Metrics bind criteria to metrics over the file's bindings, e.g.
	// {"expensive": "mean-time"}.
	Metrics map[string]string
}

// Settings returns the analysis settings o asks for: the file's, with the
// filter and bindings o gives over them.
func Settings(o Options) (settings.Analysis, error) {
	a := settings.Default().Analysis
	path := o.Config
	if path == "" {
		dir, err := os.Getwd()
		if err != nil {
			return a, err
		}
		path, err = config.Find(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return a, err
		}
	}
	if path != "" {
		cfg, err := config.Load(path)
		if err != nil {
			return a, err
		}
		a = cfg.Runtime.Analysis
	}
	a.Metrics = maps.Clone(a.Metrics)
	if a.Metrics == nil {
		a.Metrics = map[string]string{}
	}
	if o.Criteria != nil {
		a.Criteria = *o.Criteria
	}
	maps.Copy(a.Metrics, o.Metrics)
	return a, nil
}
