#!/bin/sh
# Runs the whole compatibility harness (every module and std suite, see
# suites.go) and writes the Markdown report.
#
#   integration/compat/run.sh [REPORT] [-- go test flags...]
#
# REPORT defaults to $TMPDIR/tigris-compat-report.md. TIGRIS_COMPAT (default
# "full") selects suites as TestCompat documents it; TIGRIS_COMPAT_BUILD=clean
# also measures clean builds of every suite (slow: it rebuilds the standard
# library twice per suite). Needs Go and the module proxy; takes about half an
# hour on two cores with a warm module cache.
set -eu
cd "$(dirname "$0")/../.."
report="${1:-${TMPDIR:-/tmp}/tigris-compat-report.md}"
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
TIGRIS_COMPAT="${TIGRIS_COMPAT:-full}" TIGRIS_COMPAT_REPORT="$report" \
	nice -n 10 go test ./integration/compat -run '^TestCompat$' -count=1 -timeout 0 -v "$@"
echo "report: $report"
