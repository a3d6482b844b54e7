// Package dash is tigris dash: a web page that shows a running program's
// monitoring, or a recorded trace, and switches probes from it.
package dash
