// Package driver plans a build and runs the go command for `tigris go
// build|test|run|...`.
//
// A build driven this way is incremental and shares the plain build cache:
//
//  1. Args reads tigris's own flags and the go command line (Args).
//  2. Plan loads tigris.yaml and, with `go list -deps`, the packages of the
//     build. For each package it reads the syntax of its files and computes
//     what the pointcuts can select there (pointcut.Restrict); a package with
//     a selection gets a digest (rewriter.Session.PackageDigest). This is the
//     one time the build parses tigris.yaml: the plan keeps what links need
//     (the run-time settings) and each selection is stored under its digest
//     for the package's compile (rewriter.WriteSelection).
//  3. Command runs the go command: plain when no package has a digest (the
//     binary links no tigris code at all), otherwise with
//     -toolexec="tigris toolexec --plan=FILE" and, for each package with a
//     digest, -gcflags=PKG=<the user's flags for PKG> -tigris=DIGEST. The go
//     command keys each compile on its own flags, so only packages with a
//     digest (and what depends on them) leave the plain cache, and an edit of
//     tigris.yaml recompiles only the packages whose digest it changes.
//
// Running `go build -toolexec="tigris toolexec"` directly stays correct, but
// without a plan the proxy can only key every compile on one fingerprint of
// the whole config (see rewriter), so it is neither incremental nor sharing.
package driver
