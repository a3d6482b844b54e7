//go:build !unix

package export

// lockCheckpoint does not lock on this system: run one shipper per
// checkpoint.
func lockCheckpoint(path string) (release func(), err error) { return func() {}, nil }
