// Package queryout prints the results of monitoring queries (package
// runtime/query): as an aligned table for people, or as the JSON lines of
// the query wire form (query.AppendSchema, query.AppendRow), which a running
// program's admin endpoint streams and tigris query writes for a trace file
// alike. tigris ctl query, tigris query and tigris dash share it.
package queryout
