// Package dash tests tigris dash in a real browser: the example service
// built with tigris and under load, tigris dash on its admin endpoint, and
// Debian's Chromium, headless, loading the page, switching a probe through it
// and taking a screenshot; a page from another origin trying the same; and
// the page's load time on a trace of a million records.
package dash
