package rewriter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tigrisgo/tigris/runtime/pointcut"
)

// TestPlannedSessionReadsNoConfig: a planned build's compiles and links get
// what they need from the plan and the package's selection. The config the
// plan was made from is removed before they run, and they still select what
// it selected and link its settings.
func TestPlannedSessionReadsNoConfig(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	path := filepath.Join(dir, "tigris.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`version: 1
pointcuts:
  shop: execution(* example.com/shop/...*(..))
monitor:
  include: ["shop && exported()", "call(* database/sql.(*DB).Query(..))"]
  inlinable: probe
  sampling: 25%
`), 0o666))
	s, err := NewSession(SessionOptions{ConfigPath: path})
	require.NoError(t, err)
	syn := &pointcut.Syntax{
		Path:   "example.com/shop/repo",
		Decls:  []pointcut.Decl{{Recv: "Store", RecvPtr: true, Name: "Find"}, {Name: "parse"}},
		Idents: map[string]bool{"Find": true, "parse": true, "Query": true},
	}
	digest, sel := s.PackageDigest("id", syn, false)
	require.NotEmpty(t, digest)
	plan := s.Plan(path, "id")
	require.NoError(t, WriteSelection(digest, sel))
	require.NoError(t, os.Remove(path))

	compile, err := PlannedSession(plan, digest)
	require.NoError(t, err)
	require.True(t, compile.Active())
	find := &pointcut.Signature{Package: syn.Path, Recv: "Store", RecvPtr: true, Name: "Find", Flags: pointcut.Exported | pointcut.Method}
	parse := &pointcut.Signature{Package: syn.Path, Name: "parse"}
	query := &pointcut.Signature{Package: "database/sql", Recv: "DB", RecvPtr: true, Name: "Query", Flags: pointcut.Exported | pointcut.Method}
	for _, sig := range []*pointcut.Signature{find, parse} {
		assert.Equal(t, s.cfg.Instrument.MatchExecution(sig), compile.cfg.Instrument.MatchExecution(sig), "%s", sig.Name)
		assert.Equal(t, s.cfg.Instrument.MatchCall(query, sig), compile.cfg.Instrument.MatchCall(query, sig), "call in %s", sig.Name)
	}
	assert.True(t, compile.cfg.Instrument.MatchExecution(find))
	assert.True(t, compile.cfg.Instrument.MatchCall(query, parse))
	assert.Equal(t, "probe", compile.cfg.Inlinable)

	link, err := PlannedSession(plan, "")
	require.NoError(t, err)
	assert.Equal(t, s.LinkFlags(), link.LinkFlags())
	assert.True(t, strings.Contains(strings.Join(link.LinkFlags(), " "), "0.25"), "the sampling rate is in the linked settings: %v", link.LinkFlags())
	assert.Equal(t, s.LinkedPackages(), link.LinkedPackages())

	_, err = PlannedSession(plan, "0123456789abcdef0123456789abcdef")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reading the package's selection")
	_, err = PlannedSession(plan, "../plans/x")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not a package digest")
}
