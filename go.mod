module github.com/tigrisgo/tigris

go 1.22.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/dave/dst v0.27.4
	github.com/google/pprof v0.0.0-20240227163752-401108e1b7e7
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	github.com/tigrisgo/tigris/runtime v0.0.0
	go.opentelemetry.io/proto/otlp v1.5.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/tools v0.30.0
	google.golang.org/protobuf v1.36.7
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	golang.org/x/mod v0.23.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
)

// Development: the runtime module of this checkout. A release tags runtime/vX.Y.Z
// first, requires it here at that version and drops this replace (go install
// pkg@version refuses a module with replace directives).
replace github.com/tigrisgo/tigris/runtime => ./runtime

// The go line above is the lowest the dependencies allow (a module that adds
// tigris as a tool inherits it); tigris's own programs keep the run-time
// defaults of the Go release it supports (a go.mod's godebug line applies only
// when this module is the main one).
godebug default=go1.26
