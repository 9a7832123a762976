#!/usr/bin/env bash
# Installs the pinned Temporal CLI (which carries the Temporal dev server and Web UI), built with Go
# from the Go module proxy; nothing else is downloaded. The binary goes to Go's bin folder ($GOBIN,
# else $(go env GOPATH)/bin), never into this repository.
#
# The build runs in the small module scripts/temporal-cli/, whose go.mod pins the CLI release and
# raises one of its dependencies: the SQLite driver of the dev server's store (modernc.org/sqlite).
# The release's own driver can let the interrupt of a query cancelled under load reach later queries
# on the same connection, after which the dev server answers "interrupted (9)" to every request; the
# driver fixed that in the version pinned here (the Temporal server moved to it for the same reason).
set -euo pipefail

VERSION="1.5.1"
SQLITE="v1.44.3"
module="$(cd "$(dirname "$0")/temporal-cli" && pwd)"

say() { printf '[temporal-cli] %s\n' "$*"; }

# The binary's CLI version and the SQLite driver it was built with, as "1.5.1 v1.44.3".
installed_build() {
  local bin="$1" version sqlite
  bin="$(command -v "$bin" 2>/dev/null || true)"
  [ -n "$bin" ] && [ -x "$bin" ] || return 1
  version="$("$bin" --version 2>/dev/null | sed -n 's/^temporal version \([0-9.]*\).*/\1/p')"
  sqlite="$(go version -m "$bin" 2>/dev/null | awk '$1 == "dep" && $2 == "modernc.org/sqlite" {print $3}')"
  echo "$version $sqlite"
}

if ! command -v go >/dev/null 2>&1; then
  say "Go is not installed or not on PATH. The Temporal CLI v${VERSION} is built from source with Go;"
  say "install Go 1.25 or newer (https://go.dev/dl/ or your distribution's golang package) and run this again."
  exit 1
fi

gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
target="$gobin/temporal"

for candidate in "${TEMPORAL_CLI_PATH:-}" "$target" temporal; do
  [ -n "$candidate" ] || continue
  if [ "$(installed_build "$candidate" || true)" = "$VERSION $SQLITE" ]; then
    say "Temporal CLI v${VERSION} (SQLite driver ${SQLITE}) already installed: $(command -v "$candidate")"
    exit 0
  fi
done

# Go's output (hundreds of "go: downloading" lines on a first build) goes to a log; the terminal gets
# one line, kept up to date while the build runs when it is a terminal, and the log's tail on failure.
log="$(mktemp "${TMPDIR:-/tmp}/temporal-cli-build.XXXXXX")"
build() (
  cd "$module" &&
    CGO_ENABLED=0 GOTOOLCHAIN=local go build -v -trimpath \
      -ldflags "-s -w -X github.com/temporalio/cli/temporalcli.Version=${VERSION}" \
      -o "$target.partial" github.com/temporalio/cli/cmd/temporal
)
progress() {
  local downloaded compiled
  downloaded="$(grep -c '^go: downloading' "$log" || true)"
  compiled="$(grep -vc '^go: ' "$log" || true)"
  printf '\r[temporal-cli] building: %s modules downloaded, %s packages compiled ' "$downloaded" "$compiled"
}

say "building Temporal CLI v${VERSION} with SQLite driver ${SQLITE} and $(go version | cut -d' ' -f3) into ${gobin} (a few minutes on first run)..."
mkdir -p "$gobin"
status=0
if [ -t 1 ]; then
  build >"$log" 2>&1 &
  builder=$!
  # Jobs a script starts in the background ignore Ctrl-C: stop the build with the script.
  trap 'kill "$builder" 2>/dev/null; exit 130' INT TERM
  while kill -0 "$builder" 2>/dev/null; do
    progress
    sleep 1
  done
  wait "$builder" || status=$?
  trap - INT TERM
  progress
  printf '\n'
else
  build >"$log" 2>&1 || status=$?
fi
if [ "$status" -ne 0 ]; then
  rm -f "$target.partial"
  {
    say "the build failed (go build exited with ${status}); the end of its output:"
    tail -n 40 "$log" | sed 's/^/    /'
    say "the whole output is in ${log}"
  } >&2
  exit 1
fi
rm -f "$log"
mv -f "$target.partial" "$target"

got="$(installed_build "$target" || true)"
if [ "$got" != "$VERSION $SQLITE" ]; then
  say "the build finished but ${target} reports '${got:-nothing}', expected '${VERSION} ${SQLITE}'."
  exit 1
fi
say "installed ${target} ($("$target" --version), SQLite driver ${SQLITE})"
case ":$PATH:" in
  *":$gobin:"*) ;;
  *) say "note: ${gobin} is not on PATH; the project's scripts find the binary there anyway." ;;
esac
