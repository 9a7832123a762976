#!/usr/bin/env bash
# Installs the pinned Temporal CLI (which carries the Temporal dev server and Web UI) with `go install`.
# It builds from the Go module proxy and downloads nothing else. The binary goes to Go's bin folder
# ($GOBIN, else $(go env GOPATH)/bin), never into this repository.
set -euo pipefail

VERSION="1.5.1"

say() { printf '[temporal-cli] %s\n' "$*"; }

installed_version() {
  local bin="$1"
  [ -x "$bin" ] || command -v "$bin" >/dev/null 2>&1 || return 1
  "$bin" --version 2>/dev/null | sed -n 's/^temporal version \([0-9.]*\).*/\1/p'
}

if ! command -v go >/dev/null 2>&1; then
  say "Go is not installed or not on PATH. The Temporal CLI v${VERSION} is built from source with Go;"
  say "install Go 1.23 or newer (https://go.dev/dl/ or your distribution's golang package) and run this again."
  exit 1
fi

gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
target="$gobin/temporal"

for candidate in "${TEMPORAL_CLI_PATH:-}" "$target" temporal; do
  [ -n "$candidate" ] || continue
  if [ "$(installed_version "$candidate" || true)" = "$VERSION" ]; then
    say "Temporal CLI v${VERSION} already installed: $(command -v "$candidate" || echo "$candidate")"
    exit 0
  fi
done

say "building Temporal CLI v${VERSION} with $(go version | cut -d' ' -f3) into ${gobin} (a few minutes on first run)..."
CGO_ENABLED=0 GOTOOLCHAIN=local go install -trimpath \
  -ldflags "-s -w -X github.com/temporalio/cli/temporalcli.Version=${VERSION}" \
  "github.com/temporalio/cli/cmd/temporal@v${VERSION}"

got="$(installed_version "$target" || true)"
if [ "$got" != "$VERSION" ]; then
  say "the build finished but ${target} reports version '${got:-none}', expected ${VERSION}."
  exit 1
fi
say "installed ${target} ($("$target" --version))"
case ":$PATH:" in
  *":$gobin:"*) ;;
  *) say "note: ${gobin} is not on PATH; the project's scripts find the binary there anyway." ;;
esac
