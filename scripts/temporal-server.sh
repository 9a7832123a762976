#!/usr/bin/env bash
# Installs the Temporal server and its SQL schema tool at the version docker-compose.yml runs, with
# `go install` from the Go module proxy (nothing else is downloaded). The binaries go to
# $(go env GOPATH)/temporal-server-<version>/bin as temporal-server and temporal-sql-tool, never
# into this repository. Prints that folder on its last line.
set -euo pipefail

VERSION="1.29.1"

say() { printf '[temporal-server] %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
  say "Go is not installed or not on PATH; the Temporal server v${VERSION} is built from source with Go 1.25 or newer."
  exit 1
fi

dir="$(go env GOPATH)/temporal-server-${VERSION}/bin"
version_of() { [ -x "$1" ] && "$1" --version 2>/dev/null | awk '{print $NF}'; }

if [ "$(version_of "$dir/temporal-server" || true)" = "$VERSION" ] &&
  [ "$(version_of "$dir/temporal-sql-tool" || true)" = "$VERSION" ]; then
  say "Temporal server v${VERSION} already installed in ${dir}"
  echo "$dir"
  exit 0
fi

say "building the Temporal server v${VERSION} and its SQL tool with $(go version | cut -d' ' -f3) into ${dir} (a few minutes on first run)..."
mkdir -p "$dir"
# Go's output (hundreds of "go: downloading" lines on a first build) goes to a log, whose end is
# shown only if the build fails.
log="$(mktemp "${TMPDIR:-/tmp}/temporal-server-build.XXXXXX")"
if ! CGO_ENABLED=0 GOTOOLCHAIN=local GOBIN="$dir" go install -trimpath -ldflags "-s -w" \
  "go.temporal.io/server/cmd/server@v${VERSION}" \
  "go.temporal.io/server/cmd/tools/sql@v${VERSION}" >"$log" 2>&1; then
  say "the build failed; the end of its output (all of it in ${log}):"
  tail -n 40 "$log" >&2
  exit 1
fi
say "built: $(grep -c '^go: downloading' "$log" || true) modules downloaded"
rm -f "$log"
mv -f "$dir/server" "$dir/temporal-server"
mv -f "$dir/sql" "$dir/temporal-sql-tool"

for binary in temporal-server temporal-sql-tool; do
  got="$(version_of "$dir/$binary" || true)"
  if [ "$got" != "$VERSION" ]; then
    say "the build finished but $dir/$binary reports version '${got:-none}', expected ${VERSION}."
    exit 1
  fi
done
say "installed temporal-server and temporal-sql-tool v${VERSION} in ${dir}"
echo "$dir"
