// Command dashsoak measures tigris dash on a live program for a long time
// (issue 25: the dashboard's memory stays bounded on a live target): it builds
// the PetClinic example with tigris, runs it under a light load
// (petclinic-load), starts `tigris dash` on its admin endpoint, fetches the
// page every few seconds as a browser that reloads would, and prints the
// dashboard's and the service's resident memory and the page's size every
// minute, as a Markdown table for docs/dashboard.md.
//
//	go run ./bench/dashsoak                  # one hour
//	go run ./bench/dashsoak -duration 5m     # a shorter look
//
// The page's content is bounded by design (the last 100 analysis cycles, the
// last windows of each function's series, the recent traces); the dashboard
// keeps one reading of the program per refresh and drops the oldest.
package main
