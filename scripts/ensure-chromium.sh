#!/usr/bin/env bash
# A headless Chromium for the index page's browser test (tests/unit/test_index_browser.py).
# Nothing to do when KAFKA_CHAOS_CHROMIUM names one or chromium, chromium-browser,
# google-chrome or google-chrome-stable is on PATH (hosted GitHub runners have Chrome and
# Chromium); otherwise Debian's `chromium` package, installed when we are root on Debian.
set -euo pipefail

found() {
  if [ -n "${KAFKA_CHAOS_CHROMIUM:-}" ]; then
    [ -x "$KAFKA_CHAOS_CHROMIUM" ]
    return
  fi
  local b
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  return 1
}

found && exit 0
if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
  echo "setup: installing Debian's chromium (headless browser for the index page's test)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  found && exit 0
fi
echo "setup: no Chromium found (chromium, chromium-browser, google-chrome); install one, or set" >&2
echo "       KAFKA_CHAOS_CHROMIUM to its path, then re-run 'make setup' (Debian: apt-get install chromium)." >&2
exit 1
