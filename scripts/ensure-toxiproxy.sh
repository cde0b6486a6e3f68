#!/usr/bin/env bash
# Toxiproxy's server (github.com/Shopify/toxiproxy, pinned below) as .venv/bin/toxiproxy-server:
# the TCP proxy that the latency, bandwidth and reset faults put on a cluster's links
# (harness/nodes/links.py). Built from source with Go through the Go module proxy, static
# (CGO off), so the same file runs inside the broker images, which mount it read-only.
set -euo pipefail

version=2.12.0
cd "$(dirname "$0")/.."
bin="$PWD/.venv/bin"
target="$bin/toxiproxy-server"
stamp="$bin/.toxiproxy-server.version"

if [ -x "$target" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
# shellcheck source=scripts/lib/go.sh
. scripts/lib/go.sh
go_bin="$(command -v go || fetch_go || true)"
if [ -z "$go_bin" ]; then
  echo "setup: no Go and no Go toolchain from the module proxy: cannot build toxiproxy $version" >&2
  exit 1
fi
echo "setup: building toxiproxy $version with Go (module proxy)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
CGO_ENABLED=0 GOBIN="$build" GOTOOLCHAIN=local "$go_bin" install \
  "github.com/Shopify/toxiproxy/v2/cmd/server@v$version"
mkdir -p "$bin"
install -m 0755 "$build/server" "$target"
"$target" -version >/dev/null
echo "$version" > "$stamp"
