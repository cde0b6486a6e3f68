#!/usr/bin/env bash
# Tools the image recipe needs on the host: Maven and a JDK (jar resolution),
# debootstrap (root filesystem). Installed from Debian when we are root on
# Debian; otherwise a clear message.
set -euo pipefail

missing=()
command -v mvn >/dev/null 2>&1 || missing+=(maven)
{ command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; } || missing+=(default-jdk-headless)  # javac: the Java clients
# libfaketime: clock-skew on the harness's own clients (producer, members) runs them under it.
compgen -G '/usr/lib/*/faketime/libfaketime.so.1' >/dev/null || missing+=(faketime)
if [ "${KAFKA_CHAOS_BASE:-debootstrap}" = debootstrap ]; then
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
fi
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
  echo "setup: installing ${missing[*]} from Debian"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: missing ${missing[*]}; install them (or use KAFKA_CHAOS_BASE=pull where a registry" >&2
  echo "       is reachable, which needs no debootstrap), then re-run 'make setup'." >&2
  exit 1
fi
