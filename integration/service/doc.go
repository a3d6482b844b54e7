// Package service runs instrumented services for a while: the admin endpoint
// under load, the analyzer's cycles, and tigris demo. It is apart from package
// integration so that these runs have a test timeout of their own.
package service
