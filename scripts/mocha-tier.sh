#!/usr/bin/env bash
# One tier of tests: `bash scripts/mocha-tier.sh <unit|workflows|integration> [files] [mocha options]`.
# Files named on the command line run alone; without any, every file of the tier runs. (The tiers'
# .mocharc files name no spec: mocha would add it to the files given.)
set -euo pipefail
cd "$(dirname "$0")/.."
tier="$1"
shift
for arg in "$@"; do
  case "$arg" in *.ts) exec npx mocha --config ".mocharc.$tier.json" "$@" ;; esac
done

# The files that take longest go first: in parallel mode mocha hands files to its processes in the
# order given, and a long file handed out last would run on alone at the end of the tier.
longest=()
case "$tier" in
  integration)
    longest=(
      test/integration/conformance-selftest-connections.test.ts
      test/integration/conformance-selftest-services.test.ts
      test/integration/conformance-selftest-dependencies.test.ts
      test/integration/negative-inputs.test.ts
      test/integration/conformance.test.ts
      test/integration/network-service-configs.test.ts
      test/integration/connection-provisioning.test.ts
      test/integration/network-feature-configs.test.ts
      test/integration/conformance-selftest.test.ts
      test/integration/authorisation-matrix.test.ts
      test/integration/network-services.test.ts
      test/integration/connection-lifecycle.test.ts
      test/integration/client-round-trips.test.ts
      test/integration/virtual-circuit-configs.test.ts
      test/integration/event-payloads.test.ts
      test/integration/quotas.test.ts
      test/integration/statistics.test.ts
      test/integration/conformance-package.test.ts
      test/integration/conformance-selftest-clients.test.ts
      test/integration/conformance-html.test.ts
      test/integration/ixf-export.test.ts
    )
    ;;
esac
shopt -s globstar nullglob
files=()
declare -A listed=()
for file in "${longest[@]}" test/"$tier"/**/*.test.ts; do
  [ -n "${listed[$file]:-}" ] && continue
  listed[$file]=1
  files+=("$file")
done
exec npx mocha --config ".mocharc.$tier.json" "${files[@]}" "$@"
