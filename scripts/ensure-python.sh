#!/usr/bin/env bash
# Python >= 3.10 with venv support; Debian's python3-venv is installed when missing (root on Debian).
set -euo pipefail

ok() { command -v python3 >/dev/null 2>&1 &&
  python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; }

ok && exit 0
if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
  echo "setup: installing Debian's python3 and python3-venv"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv >/dev/null
  ok && exit 0
fi
echo "setup: need python3 >= 3.10 with the venv module (Debian: apt-get install python3-venv)" >&2
exit 1
