#!/usr/bin/env bash
# `npm test`: lint, type check, the production build, unit tests, then integration tests against a
# real MariaDB and a real Temporal dev server (started by the suite itself). Ends with one line
# counting every test.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-temporal.sh || exit 1

step() { printf '\n== %s\n' "$*"; }

# The checks that need nothing running (lint, formatting, the OpenAPI document, the type check and
# the production build) run at once, each into a log of its own shown in order once all are done: on
# two cores they take about as long as the longest, ESLint. The build is the production build: the
# image runs what it emits, and integration tests start dist/ processes.
checks=(lint:code lint:format lint:spec typecheck build)
logs="$(mktemp -d)"
for check in "${checks[@]}"; do
  (
    npm run --silent "$check" >"$logs/$check" 2>&1
    echo $? >"$logs/$check.code"
    echo "$SECONDS" >"$logs/$check.end"
  ) &
done
wait
checked=0
for check in "${checks[@]}"; do
  step "$check (done after $(cat "$logs/$check.end") s)"
  cat "$logs/$check"
  [ "$(cat "$logs/$check.code")" = 0 ] || checked=1
done
rm -rf "$logs"
[ "$checked" = 0 ] || exit 1

passed=0
failed=0
status=0
for suite in unit workflows integration; do
  step "$suite tests (from $SECONDS s)"
  log="$(mktemp)"
  bash scripts/mocha-tier.sh "$suite" 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  p=$(sed -n 's/^ *\([0-9][0-9]*\) passing.*/\1/p' "$log" | tail -n 1)
  f=$(sed -n 's/^ *\([0-9][0-9]*\) failing.*/\1/p' "$log" | tail -n 1)
  rm -f "$log"
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$code" -ne 0 ]; then
    status=1
    # A suite that died before reporting (e.g. its setup failed) still counts as a failure.
    [ -n "$f" ] || failed=$((failed + 1))
  fi
done

printf '\n%s\n' "npm test took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "mocha: ${passed} passed, ${failed} failed"
exit "$status"
