#!/usr/bin/env bash
# `npm test`: lint, type check and the production build, then the integration tests against a real
# MariaDB and a real Temporal dev server (started by the suite itself), with the unit and workflow
# tests beside them. Ends with one line counting every test.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-temporal.sh || exit 1

step() { printf '\n== %s\n' "$*"; }

# The checks that need nothing running (lint, formatting, the OpenAPI document, the type check and
# the production build) run at once, each into a log of its own shown in order once all are done: on
# two cores they take about as long as the longest, ESLint. The build is the production build: the
# image runs what it emits, and integration tests start dist/ processes. It emits without checking
# types, which the type check beside it does for every file.
checks=(lint:code lint:format lint:spec typecheck build)
declare -A command=(
  [lint:code]="npm run --silent lint:code"
  [lint:format]="npm run --silent lint:format"
  [lint:spec]="npm run --silent lint:spec"
  [typecheck]="npm run --silent typecheck"
  [build]="npm run --silent build -- --no-check"
)
logs="$(mktemp -d)"
for check in "${checks[@]}"; do
  (
    ${command[$check]} >"$logs/$check" 2>&1
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
[ "$checked" = 0 ] || { rm -rf "$logs"; exit 1; }

# The integration tier waits on workflows and the database much of its time: the unit and workflow
# tiers run beside it, into logs of their own shown once it is done.
passed=0
failed=0
status=0
count() {
  local log="$1" code="$2" p f
  p=$(sed -n 's/^ *\([0-9][0-9]*\) passing.*/\1/p' "$log" | tail -n 1)
  f=$(sed -n 's/^ *\([0-9][0-9]*\) failing.*/\1/p' "$log" | tail -n 1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$code" -ne 0 ]; then
    status=1
    # A suite that died before reporting (e.g. its setup failed) still counts as a failure.
    [ -n "$f" ] || failed=$((failed + 1))
  fi
}
for suite in unit workflows; do
  (
    started=$SECONDS
    bash scripts/mocha-tier.sh "$suite" >"$logs/$suite" 2>&1
    echo $? >"$logs/$suite.code"
    echo "$started" >"$logs/$suite.start"
    echo "$SECONDS" >"$logs/$suite.end"
  ) &
done
step "integration tests (from $SECONDS s)"
bash scripts/mocha-tier.sh integration 2>&1 | tee "$logs/integration"
integration=${PIPESTATUS[0]}
integrated=$SECONDS
wait
for suite in unit workflows; do
  step "$suite tests (from $(cat "$logs/$suite.start") s to $(cat "$logs/$suite.end") s, beside the integration tests)"
  cat "$logs/$suite"
  count "$logs/$suite" "$(cat "$logs/$suite.code")"
done
count "$logs/integration" "$integration"
rm -rf "$logs"

printf '\n%s\n' "the integration tests ended after $integrated s"
printf '%s\n' "npm test took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "mocha: ${passed} passed, ${failed} failed"
exit "$status"
