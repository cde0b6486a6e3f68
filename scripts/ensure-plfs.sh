#!/usr/bin/env bash
# plfs (tools/plfs, this repository's own Go module) as .venv/bin/plfs: the FUSE file system
# that simulates a power loss on a broker's log dirs (tools/plfs/README.md). Built with Go
# through the Go module proxy (its one dependency, go-fuse, is pinned in tools/plfs/go.mod),
# static (CGO off), so the same file can run inside the broker images, mounted read-only.
# PLFS_BIN_DIR installs elsewhere (default .venv/bin).
set -euo pipefail

cd "$(dirname "$0")/.."
src=tools/plfs
bin="${PLFS_BIN_DIR:-$PWD/.venv/bin}"
target="$bin/plfs"
stamp="$bin/.plfs.version"

# The version is the sources' hash: an edit to tools/plfs rebuilds, a second run does nothing.
version="$(cd "$src" && find . -maxdepth 1 \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -print0 \
  | sort -z | xargs -0 cat | sha256sum | cut -c1-16)"
if [ -x "$target" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
  exit 0
fi
# shellcheck source=scripts/lib/go.sh
. scripts/lib/go.sh
go_bin="$(command -v go || fetch_go || true)"
if [ -z "$go_bin" ]; then
  echo "setup: no Go and no Go toolchain from the module proxy: cannot build plfs" >&2
  exit 1
fi
echo "setup: building plfs $version with Go (module proxy)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
(cd "$src" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly" "$go_bin" build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=$version" -o "$build/plfs" .)
mkdir -p "$bin"
install -m 0755 "$build/plfs" "$target"
[ "$("$target" version)" = "$version" ]
echo "$version" > "$stamp"
