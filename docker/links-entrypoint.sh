#!/bin/bash
# Entry point of a Kafka node whose links run through Toxiproxy (harness/nodes/links.py):
# the proxies first, then the image's own entry point. Mounted, with the server binary, by
# the harness only for clusters with link proxies; the image itself is unchanged.
# KAFKA_CHAOS_PROXIES: Toxiproxy's config (a JSON list of proxies); the API on port 8474.
set -euo pipefail

conf=/tmp/kafka-chaos-proxies.json
printf '%s\n' "${KAFKA_CHAOS_PROXIES:?KAFKA_CHAOS_PROXIES is empty}" > "$conf"
LOG_LEVEL=error /opt/kafka-chaos-links/toxiproxy-server -host 0.0.0.0 -port 8474 \
  -config "$conf" >/tmp/toxiproxy.log 2>&1 &
# The server creates the proxies before its API listens: once the API answers, every
# connection Kafka opens goes through them.
for _ in $(seq 1 300); do
  if (exec 3<>/dev/tcp/127.0.0.1/8474) 2>/dev/null; then
    exec /opt/kafka/bin/kafka-chaos-entrypoint "$@"
  fi
  sleep 0.1
done
echo "toxiproxy did not start:" >&2
cat /tmp/toxiproxy.log >&2
exit 70
