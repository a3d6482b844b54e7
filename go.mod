module github.com/tigrisgo/tigris

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/dave/dst v0.28.0
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	github.com/tigrisgo/tigris/runtime v0.0.0
	go.opentelemetry.io/proto/slim/otlp v1.11.1
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/tools v0.52.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

// Development: the runtime module of this checkout. A release tags runtime/vX.Y.Z
// first, requires it here at that version and drops this replace (go install
// pkg@version refuses a module with replace directives).
replace github.com/tigrisgo/tigris/runtime => ./runtime
