#!/usr/bin/env bash
# IX-API conformance of an exchange's API in any CI system (GitLab CI, Jenkins, Buildkite, cron …):
# installs the packed suite, runs it, leaves the JUnit, HTML and JSON reports in one folder for the
# CI system to keep and show, and exits as the suite does.
#
#   CONFORMANCE_BASE_URL=https://ixapi.example.net/api/v2 bash ci.sh
#
# Needs Node.js 20 and npm, and in the environment (from the CI system's secret store):
#   IXAPI_PRIMARY_KEY, IXAPI_PRIMARY_SECRET       the account under test (required)
#   IXAPI_SECONDARY_KEY, IXAPI_SECONDARY_SECRET   an unrelated account, for the isolation and
#                                                 redaction checks (without it they are NOT_APPLICABLE)
# ixapi-conformance reads these itself when no --credentials file is given: no secret appears on a
# command line. The script's own settings:
#   CONFORMANCE_BASE_URL           the API root under test (required)
#   CONFORMANCE_PROFILE            read (the default: only reads, safe against production) or full
#                                  (creates and removes resources of its own, placing real orders:
#                                  a staging exchange only)
#   CONFORMANCE_REPORTS            the folder for the reports (default conformance-reports)
#   CONFORMANCE_TARBALL            the packed suite, ixapi-conformance-<version>.tgz; unset, the suite
#                                  must be installed already where npx finds it
#   CONFORMANCE_EXPECTED_FAILURES  optionally a file of check ids known to fail, one a line
#
# Instead of the tarball, a checkout of the suite's own repository works too: `npm ci` in it, then
# `npm run conformance -- <the options below>`.
#
# Exit codes, as ixapi-conformance's: 0 when no check failed or timed out, 1 when one did (the
# reports say which), 2 for a usage error (an unknown option, missing credentials; no report).
# GitLab CI, for one, reads the JUnit report with `artifacts: reports: junit:
# conformance-reports/junit.xml` and keeps the folder with `artifacts: paths:` and `when: always`.
set -euo pipefail

if [ -z "${CONFORMANCE_BASE_URL:-}" ]; then
  echo "CONFORMANCE_BASE_URL must name the API root, e.g. https://ixapi.example.net/api/v2" >&2
  exit 2
fi
base_url="$CONFORMANCE_BASE_URL"
profile="${CONFORMANCE_PROFILE:-read}"
reports="${CONFORMANCE_REPORTS:-conformance-reports}"
mkdir -p "$reports"

# --no-install: run the suite installed, never a package of that name from a registry.
if [ -n "${CONFORMANCE_TARBALL:-}" ]; then
  case "$CONFORMANCE_TARBALL" in
    /*) tarball="$CONFORMANCE_TARBALL" ;;
    *) tarball="$PWD/$CONFORMANCE_TARBALL" ;;
  esac
  # Into a folder of its own, so that a package.json where this runs is left alone.
  suite="$(mktemp -d)"
  trap 'rm -rf "$suite"' EXIT
  npm install --prefix "$suite" --no-audit --no-fund "$tarball"
  conformance() { npx --prefix "$suite" --no-install ixapi-conformance "$@"; }
else
  conformance() { npx --no-install ixapi-conformance "$@"; }
fi

options=(--base-url "$base_url" --profile "$profile"
  --junit "$reports/junit.xml" --html "$reports/report.html" --json "$reports/report.json")
if [ -n "${CONFORMANCE_EXPECTED_FAILURES:-}" ]; then
  options+=(--expected-failures "$CONFORMANCE_EXPECTED_FAILURES")
fi
if [ "$profile" = full ]; then
  # What the run creates is written down before each creation, for cleanup below.
  options+=(--ledger "$reports/ledger.jsonl")
fi

code=0
conformance "${options[@]}" || code=$?

if [ -f "$reports/ledger.jsonl" ]; then
  # Whatever the outcome, nothing of the run's own may stay on the exchange: cleanup removes what
  # the ledger still lists (and says "nothing left behind" when the run removed it all itself).
  conformance cleanup --base-url "$base_url" --ledger "$reports/ledger.jsonl" || code=$((code == 0 ? 1 : code))
fi

case $code in
  0) echo "ixapi-conformance: no check failed or timed out; reports in $reports/" ;;
  1) echo "ixapi-conformance: checks failed or timed out, or something was left behind; see $reports/report.html" >&2 ;;
  2) echo "ixapi-conformance: called wrongly or without credentials (see above); no report was written" >&2 ;;
  *) echo "ixapi-conformance stopped unexpectedly (exit code $code)" >&2 ;;
esac
exit "$code"
