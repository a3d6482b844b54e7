module github.com/tigrisgo/tigris/examples/petclinic

go 1.26.0

require modernc.org/sqlite v1.60.1

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/tigrisgo/tigris v0.0.0
	github.com/tigrisgo/tigris/runtime v0.0.0
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/sys v0.49.0 // indirect
	modernc.org/libc v1.77.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

replace github.com/tigrisgo/tigris/runtime => ../../runtime

replace github.com/tigrisgo/tigris => ../..
