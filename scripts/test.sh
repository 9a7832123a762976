#!/usr/bin/env bash
# `npm test`: the production build, then the integration tests against a real MariaDB and a real
# Temporal dev server (started by the suite itself), with everything else beside them: the fabric
# tests (Open vSwitch and BIRD, one file after another), the Galera tests (on a cluster of their
# own), and at a lower CPU priority lint, formatting, the OpenAPI document, the type check, and the
# unit and workflow tests. Ends with one line counting every test.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-temporal.sh || exit 1

step() { printf '\n== %s\n' "$*"; }
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

# The production build comes first: the image runs what it emits, and integration tests start dist/
# processes. It emits without checking types, which the type check does for every file.
step "build"
npm run --silent build -- --no-check || exit 1

# The integration tier waits on workflows, the database and timers much of its time and is the
# longest: it runs in the foreground at normal priority, and the rest runs beside it, each into a log
# of its own shown once all are done, `nice`d so that it takes the cores the integration tier leaves
# idle rather than slowing it down. The workflow tier keeps timers of its own: it comes before the
# checks, which wait for nothing. The unit tier is not `nice`d: it needs about a minute of CPU in
# all, but behind the integration tier's processes at a lower priority it got so little of the CPU
# that its tests took up to sixty times as long as alone, near their timeouts. Nor is the fabric
# tier: its files run one at a time (one Open vSwitch fabric per host) and wait on pings and BGP
# timers more than they compute. The Galera tier runs last, alone: its cases race transactions on
# three nodes whose replication and certification a machine busy with the other tiers slows unevenly.
declare -A command=(
  [unit]="bash scripts/mocha-tier.sh unit"
  [workflows]="bash scripts/mocha-tier.sh workflows"
  [fabric]="bash scripts/mocha-tier.sh fabric"
  [lint:code]="npm run --silent lint:code"
  [lint:format]="npm run --silent lint:format"
  [lint:spec]="npm run --silent lint:spec"
  [typecheck]="npm run --silent typecheck"
)
declare -A niceness=([fabric]=0 [unit]=0 [workflows]=10 [lint:code]=19 [lint:format]=19 [lint:spec]=19 [typecheck]=19)
beside=(lint:code lint:format lint:spec typecheck unit workflows fabric)
for job in "${beside[@]}"; do
  (
    echo "$SECONDS" >"$logs/$job.start"
    nice -n "${niceness[$job]}" ${command[$job]} >"$logs/$job" 2>&1
    echo $? >"$logs/$job.code"
    echo "$SECONDS" >"$logs/$job.end"
  ) &
done

step "integration tests (from $SECONDS s)"
bash scripts/mocha-tier.sh integration 2>&1 | tee "$logs/integration"
integration=${PIPESTATUS[0]}
integrated=$SECONDS
wait

step "galera (from $SECONDS s, alone)"
bash scripts/mocha-tier.sh galera 2>&1 | tee "$logs/galera"
galera=${PIPESTATUS[0]}

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
# What failed, again at the very end: a report that keeps only the tail of the output still shows it.
recap() {
  local name="$1" log="$2" code="$3"
  [ "$code" -ne 0 ] || return 0
  printf '\n-- %s (exit %s)\n' "$name" "$code"
  if grep -q '^ *[0-9][0-9]* failing' "$log"; then
    # Mocha's summary: each failing test with its error and the first lines of its stack.
    sed -n '/^ *[0-9][0-9]* failing/,$p' "$log" | head -n 120
  else
    tail -n 40 "$log"
  fi
}
for job in "${beside[@]}"; do
  step "$job (from $(cat "$logs/$job.start") s to $(cat "$logs/$job.end") s, beside the integration tests)"
  cat "$logs/$job"
  code=$(cat "$logs/$job.code")
  case "$job" in
    unit | workflows | fabric) count "$logs/$job" "$code" ;;
    *) [ "$code" = 0 ] || { status=1; echo "$job failed (exit $code)"; } ;;
  esac
done
count "$logs/integration" "$integration"
count "$logs/galera" "$galera"

if [ "$status" -ne 0 ]; then
  step "what failed"
  for job in "${beside[@]}"; do recap "$job" "$logs/$job" "$(cat "$logs/$job.code")"; done
  recap integration "$logs/integration" "$integration"
  recap galera "$logs/galera" "$galera"
fi

printf '\n%s\n' "the integration tests ended after $integrated s"
printf '%s\n' "npm test took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "mocha: ${passed} passed, ${failed} failed"
exit "$status"
