#!/usr/bin/env bash
# Make sure a Docker engine answers. Installs Debian's docker.io and starts
# dockerd only when none answers and we are root on Debian; never starts a
# second daemon.
set -euo pipefail

answers() { timeout 20 docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && answers; then
  echo "docker: engine answers"
  exit 0
fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  echo "docker: no Docker engine answers ('docker info' failed)." >&2
  echo "        Start Docker (e.g. 'sudo systemctl start docker' or Docker Desktop), then re-run 'make setup'." >&2
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v iptables >/dev/null 2>&1; then
  echo "docker: installing Debian's docker.io"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io iptables >/dev/null
fi

if pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker: a dockerd process exists but does not answer yet; waiting for it"
else
  echo "docker: starting dockerd (log: /var/log/kafka-chaos-dockerd.log)"
  nohup dockerd >/var/log/kafka-chaos-dockerd.log 2>&1 &
fi

for _ in $(seq 1 60); do
  if answers; then echo "docker: engine answers"; exit 0; fi
  sleep 1
done
echo "docker: dockerd did not answer within 60 s; last log lines:" >&2
tail -n 30 /var/log/kafka-chaos-dockerd.log >&2 || true
exit 1
