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
exec npx mocha --config ".mocharc.$tier.json" "test/$tier/**/*.test.ts" "$@"
