module github.com/tigrisgo/tigris

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/dave/dst v0.28.0
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/spf13/cobra v1.10.2
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	github.com/tigrisgo/tigris/runtime v0.0.0
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/tools v0.52.0
)

replace github.com/tigrisgo/tigris/runtime => ./runtime
